/// The CA certificate in the forms devices take: PEM (Linux, Android, browsers), DER (`.crt`,
/// Android and Windows), and an iOS configuration profile.
public struct CADownloads: Sendable, Equatable {
    public var pem: [UInt8]
    public var der: [UInt8]
    public var mobileConfig: [UInt8]

    public init(pem: [UInt8], der: [UInt8], mobileConfig: [UInt8]) {
        self.pem = pem
        self.der = der
        self.mobileConfig = mobileConfig
    }
}

/// `http://harrec/`: what the host offers and how to trust harrec's CA on each platform, short
/// enough to follow on a phone.
enum SetupPage {
    static func html(base: String, replaying: Bool, hasCA: Bool) -> String {
        let what = replaying ? "harrec replay, serving a recording" : "harrec, the recording proxy"
        var body = "<h1>\(what)</h1>\n"
        if hasCA {
            body += """
                <h2>Trust harrec's certificate</h2>
                <p>Download: <a href="\(base)/ca.mobileconfig">iOS profile</a> ·
                <a href="\(base)/ca.crt">ca.crt</a> (Android, Windows) · <a href="\(base)/ca.pem">ca.pem</a></p>
                <h3>iPhone and iPad</h3>
                <ol><li>Open <a href="\(base)/ca.mobileconfig">the profile</a> in Safari and allow the download.</li>
                <li>Settings, Profile Downloaded, Install.</li>
                <li>Settings, General, About, Certificate Trust Settings: turn on full trust for the harrec CA.</li></ol>
                <h3>iOS Simulator</h3>
                <p><code>xcrun simctl keychain booted add-root-cert harrec-ca.pem</code> (from <code>harrec ca export --out harrec-ca.pem</code>).</p>
                <h3>Android</h3>
                <ol><li>Download <a href="\(base)/ca.crt">ca.crt</a>; Settings, Security, Encryption and credentials, Install a certificate, CA certificate.</li>
                <li>Apps trust user CAs only in debug builds whose network security config says
                <code>&lt;debug-overrides&gt;&lt;trust-anchors&gt;&lt;certificates src="user"/&gt;</code>.</li></ol>
                <h3>Desktop browsers</h3>
                <p>Import <a href="\(base)/ca.pem">ca.pem</a> as a certificate authority trusted for websites
                (Firefox: Settings, Privacy and Security, Certificates; Chrome: the system store).</p>

                """
        } else {
            body += "<p>TLS interception is off: there is no CA to install.</p>\n"
        }
        body += "<h2>Other paths</h2>\n<ul>"
        if replaying {
            body += "<li><code>\(base)/reset</code>: restart every queue (between tests)</li>"
        } else {
            body += "<li><code>\(base)/mark?name=NAME</code>: start a new scenario (a HAR page) now</li>"
        }
        body += "</ul>\n"
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>harrec</title>
            <style>body{font-family:-apple-system,system-ui,sans-serif;max-width:40em;margin:1em auto;padding:0 1em;line-height:1.4}code{background:#eee;padding:0 .2em}</style>
            </head><body>
            \(body)</body></html>

            """
    }
}
