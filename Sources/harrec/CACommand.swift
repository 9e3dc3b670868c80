import CLI
import Files
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore
import ProxyRuntime
import TLS

let caDirOption = OptionSpec("ca-dir", .value(placeholder: "<dir>"),
                             help: "CA directory (default $HARREC_CA_DIR, else ~/.harrec).")

let caSpec = CommandSpec(
    name: "ca",
    abstract: "Create, show or export the local CA that signs intercepted TLS connections.",
    usage: "harrec ca init|show|export [--ca-dir <dir>] [--key-type ecdsa|rsa] [--format pem|der|mobileconfig] [--out <file>] [--qr [--url <url>] [--qr-png <file>]]",
    options: [
        caDirOption,
        OptionSpec("key-type", .value(placeholder: "ecdsa|rsa"), help: "Key type for a new CA (default ecdsa, P-256; rsa is RSA 2048)."),
        OptionSpec("format", .value(placeholder: "pem|der|mobileconfig"), help: "Export format (default pem; mobileconfig is an iOS profile that installs the CA)."),
        OptionSpec("out", short: "o", .value(placeholder: "<file>"), help: "Export to a file instead of standard output."),
        OptionSpec("mobileconfig", .value(placeholder: "<file>"), help: "Export the iOS profile to this file (the same as --format mobileconfig --out <file>)."),
        OptionSpec("qr", .flag, help: "With show: print a QR code of the device setup page (http://<lan-ip>:8888/harrec/ unless --url)."),
        OptionSpec("url", .value(placeholder: "<url>"), help: "With --qr: the setup page's URL, e.g. http://192.168.1.20:9000/harrec/."),
        qrPNGOption,
    ],
    positionals: ["action"],
    discussion: """
    ACTIONS:
      init    create the CA if it does not exist and print its path and fingerprint
      show    print the certificate path, subject, SHA-256 fingerprint and how to trust it
              (--qr: and a QR code of the device setup page)
      export  write the public certificate (never the key), or an iOS profile that installs it
    """)

/// The CA directory: --ca-dir, else $HARREC_CA_DIR, else ~/.harrec.
func caDirectory(_ parsed: ParsedArguments) -> String {
    if let dir = parsed.value("ca-dir") { return dir }
    if let env = getenv("HARREC_CA_DIR"), let text = String(validatingCString: env), !text.isEmpty { return text }
    let home = getenv("HOME").flatMap { String(validatingCString: $0) } ?? "."
    return home + "/.harrec"
}

func loadAuthority(_ parsed: ParsedArguments) -> CertificateAuthority {
    let keyType: CertificateAuthority.KeyType
    switch parsed.value("key-type") ?? "ecdsa" {
    case "ecdsa", "ecdsa-p256", "p256": keyType = .ecdsaP256
    case "rsa", "rsa2048", "rsa-2048": keyType = .rsa2048
    case let other: fail("--key-type must be ecdsa or rsa, not '\(other)'")
    }
    do {
        return try CertificateAuthority.loadOrCreate(directory: caDirectory(parsed), keyType: keyType)
    } catch {
        fail("\(error)", code: 1)
    }
}

/// `show` and `export` describe the CA that exists; only `init` and `record` create one.
func requireExistingCA(_ parsed: ParsedArguments) {
    let directory = caDirectory(parsed)
    let files = [CertificateAuthority.certificateFileName, CertificateAuthority.keyFileName]
    if files.allSatisfy({ access(directory + "/" + $0, F_OK) != 0 }) {
        fail("no CA in \(directory) yet: create it with 'harrec ca init' (harrec record also creates it)", code: 1)
    }
}

func trustInstructions(_ path: String) -> String {
    """
    To trust it (the key stays in the CA directory, mode 0600; never share it):
      iOS simulator:  xcrun simctl keychain booted add-root-cert \(path)
      iOS device:     harrec record --device, then open the setup page it prints (or AirDrop the
                      profile from harrec ca export --mobileconfig FILE), install it, then enable full
                      trust in Settings > General > About > Certificate Trust Settings
      macOS:          sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain \(path)
      Debian/Ubuntu:  sudo cp \(path) /usr/local/share/ca-certificates/harrec-ca.crt && sudo update-ca-certificates
      curl:           curl --cacert \(path) ...
      Python:         SSL_CERT_FILE=\(path) (ssl, httpx) or REQUESTS_CA_BUNDLE=\(path) (requests)
      Android:        Settings > Security > Encryption & credentials > Install a certificate > CA certificate
                      (apps must opt in to user CAs with a network security config)
    """
}

func runCA(_ arguments: [String]) -> Int32 {
    let parsed = parseOrExit(caSpec, arguments)
    switch parsed.positionals[0] {
    case "init":
        let authority = loadAuthority(parsed)
        printErr("harrec: \(authority.wasCreated ? "created" : "using existing") CA in \(authority.directory)")
        print("harrec: CA certificate: \(authority.certificatePath)")
        print("harrec: SHA-256 fingerprint: \(authority.fingerprintSHA256)")
        return 0
    case "show":
        requireExistingCA(parsed)
        let authority = loadAuthority(parsed)
        print("path: \(authority.certificatePath)")
        print("subject: CN=\(authority.subjectCommonName), O=harrec")
        print("sha256: \(authority.fingerprintSHA256)")
        print("")
        print(trustInstructions(authority.certificatePath), terminator: "\n")
        if parsed.flag("qr") || parsed.value("qr-png") != nil {
            let url = parsed.value("url") ?? setupPageURL(host: lanIPv4Address() ?? "127.0.0.1", port: 8888)
            printErr("harrec: the setup page, for a phone whose proxy points at harrec: \(url)")
            do {
                try showQRCode(url, pngPath: parsed.value("qr-png"))
            } catch {
                fail("\(error)")
            }
        }
        return 0
    case "export":
        requireExistingCA(parsed)
        let authority = loadAuthority(parsed)
        let bytes: [UInt8]
        let profile = parsed.value("mobileconfig")
        switch (profile == nil ? nil : "mobileconfig") ?? parsed.value("format") ?? "pem" {
        case "pem": bytes = Array(authority.certificatePEM.utf8)
        case "der": bytes = authority.certificateDER
        case "mobileconfig": bytes = authority.mobileConfig()
        case let other: fail("--format must be pem, der or mobileconfig, not '\(other)'")
        }
        if let out = profile ?? parsed.value("out") {
            do {
                try writeFileAtomically(bytes, to: out)
            } catch {
                fail("\(error)", code: 1)
            }
            printErr(profile == nil ? "harrec: wrote the CA certificate to \(out)" : "harrec: wrote the iOS profile that installs the CA to \(out)")
        } else {
            writeAll(bytes, to: STDOUT_FILENO)
        }
        return 0
    case let other:
        fail("unknown ca action '\(other)'; use init, show or export (see 'harrec ca --help')")
    }
}

extension CADownloads {
    /// The CA in every form the setup page serves.
    init(authority: CertificateAuthority) {
        self.init(pem: Array(authority.certificatePEM.utf8), der: authority.certificateDER, mobileConfig: authority.mobileConfig())
    }
}
