import TextEncodings

extension CertificateAuthority {
    /// An iOS and macOS configuration profile that installs this CA as a trusted root
    /// (`com.apple.security.root`), unsigned. Its UUIDs come from the certificate's fingerprint,
    /// so exporting the same CA twice gives the same bytes and a device replaces, not duplicates,
    /// the profile.
    public func mobileConfig() -> [UInt8] {
        let hex = fingerprintSHA256.filter { $0 != ":" }
        func uuid(_ offset: Int) -> String {
            let digits = Array(hex.dropFirst(offset).prefix(32))
            return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }.joined(separator: "-")
        }
        let name = escapedXML(subjectCommonName)
        let profile = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>PayloadContent</key>
            \t<array>
            \t\t<dict>
            \t\t\t<key>PayloadCertificateFileName</key>
            \t\t\t<string>harrec-ca.cer</string>
            \t\t\t<key>PayloadContent</key>
            \t\t\t<data>\(Base64.encode(certificateDER))</data>
            \t\t\t<key>PayloadDescription</key>
            \t\t\t<string>Lets harrec record this device's HTTPS traffic. Remove it when you are done.</string>
            \t\t\t<key>PayloadDisplayName</key>
            \t\t\t<string>\(name)</string>
            \t\t\t<key>PayloadIdentifier</key>
            \t\t\t<string>dev.harrec.ca.\(uuid(0))</string>
            \t\t\t<key>PayloadType</key>
            \t\t\t<string>com.apple.security.root</string>
            \t\t\t<key>PayloadUUID</key>
            \t\t\t<string>\(uuid(0))</string>
            \t\t\t<key>PayloadVersion</key>
            \t\t\t<integer>1</integer>
            \t\t</dict>
            \t</array>
            \t<key>PayloadDescription</key>
            \t<string>Installs the certificate authority of harrec, the recording proxy. After installing, turn on full trust in Settings, General, About, Certificate Trust Settings.</string>
            \t<key>PayloadDisplayName</key>
            \t<string>\(name)</string>
            \t<key>PayloadIdentifier</key>
            \t<string>dev.harrec.profile.\(uuid(32))</string>
            \t<key>PayloadRemovalDisallowed</key>
            \t<false/>
            \t<key>PayloadType</key>
            \t<string>Configuration</string>
            \t<key>PayloadUUID</key>
            \t<string>\(uuid(32))</string>
            \t<key>PayloadVersion</key>
            \t<integer>1</integer>
            </dict>
            </plist>

            """
        return Array(profile.utf8)
    }
}

/// Text for an XML element: the five predefined entities escaped.
func escapedXML(_ text: String) -> String {
    var out = ""
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default: out.append(character)
        }
    }
    return out
}
