import CLI
import Files
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyRuntime

// Recording a phone in one step: `record --device` listens on the LAN with credentials of its
// own, and prints what to type into the phone and a QR code for the setup page; `ca show --qr`
// prints that code alone.

let deviceOption = OptionSpec("device", .flag, help: "Record a phone: listen on this machine's LAN address with generated proxy credentials (unless given), and print the phone's proxy settings and a QR code for the setup page.")
let qrPNGOption = OptionSpec("qr-png", .value(placeholder: "<file>"), help: "Also write the setup page's QR code as a PNG.")

/// Fresh proxy credentials for a device session: a fixed user and 12 random letters and digits.
func generatedDeviceCredentials() -> (username: String, password: String) {
    let alphabet = Array("abcdefghijkmnopqrstuvwxyz23456789")  // no l, 1, 0, o: typed on a phone
    var generator = SystemRandomNumberGenerator()
    let password = String((0..<12).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    return ("harrec", password)
}

/// The setup page a phone opens first, on the proxy port asked directly.
func setupPageURL(host: String, port: UInt16) -> String {
    "http://\(host.contains(":") ? "[\(host)]" : host):\(port)/harrec/"
}

/// Prints `url`'s QR code on stderr and, with `--qr-png`, writes it as a PNG first (so it is
/// on disk once anything about it is printed).
func showQRCode(_ url: String, pngPath: String?) throws {
    let code = try writeQRCode(url, pngPath: pngPath)
    printErr(code.terminal())
}

private func writeQRCode(_ url: String, pngPath: String?) throws -> QRCode {
    guard let code = QRCode(url) else { throw UsageError("\(url) is too long for a QR code") }
    if let pngPath {
        do {
            try writeFileAtomically(code.png(), to: pngPath)
        } catch {
            throw UsageError("--qr-png \(pngPath): \(error)")
        }
    }
    return code
}

/// What `record --device` prints once listening: the phone's proxy settings, then the code.
func printDeviceInstructions(host: String, port: UInt16, credentials: (username: String, password: String)?, pngPath: String?) throws {
    let url = setupPageURL(host: host, port: port)
    let code = try writeQRCode(url, pngPath: pngPath)
    printErr("harrec: on the phone, Settings > Wi-Fi > (i) > Configure Proxy > Manual:")
    printErr("harrec:   Server \(host)   Port \(port)")
    if let credentials {
        printErr("harrec:   Authentication on: Username \(credentials.username)   Password \(credentials.password)")
    }
    printErr("harrec: then open \(url) (scan the code) to install and trust harrec's CA:")
    printErr(code.terminal())
}
