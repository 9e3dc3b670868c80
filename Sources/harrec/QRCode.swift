import CCompressionShims
import CQRShims

/// A QR code (libqrencode, error correction M) for the device setup page's URL, drawn in the
/// terminal or as a PNG.
struct QRCode {
    /// Modules per side.
    let size: Int
    /// Row by row; true is dark.
    let modules: [Bool]

    /// nil when the text is too long for a QR code.
    init?(_ text: String) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(code) }
        size = Int(code.pointee.width)
        modules = (0..<size * size).map { code.pointee.data[$0] & 1 != 0 }
    }

    /// The light margin around the code, in modules (the standard's four).
    static let quietZone = 4

    private func isDark(_ row: Int, _ column: Int) -> Bool {
        let r = row - Self.quietZone, c = column - Self.quietZone
        guard r >= 0, r < size, c >= 0, c < size else { return false }
        return modules[r * size + c]
    }

    /// Two module rows per text line with half blocks, light modules drawn (for a dark terminal,
    /// as `qrencode -t UTF8` does); phone cameras read it either way round.
    func terminal() -> String {
        let side = size + 2 * Self.quietZone
        var out = ""
        for row in stride(from: 0, to: side, by: 2) {
            for column in 0..<side {
                let top = !isDark(row, column), bottom = row + 1 < side ? !isDark(row + 1, column) : false
                switch (top, bottom) {
                case (true, true): out += "█"
                case (true, false): out += "▀"
                case (false, true): out += "▄"
                case (false, false): out += " "
                }
            }
            out += "\n"
        }
        return out
    }

    /// An 8-bit grayscale PNG, `scale` pixels per module, dark on light.
    func png(scale: Int = 8) -> [UInt8] {
        let side = (size + 2 * Self.quietZone) * scale
        var raw: [UInt8] = []
        raw.reserveCapacity(side * (side + 1))
        for y in 0..<side {
            raw.append(0)  // filter: none
            for x in 0..<side { raw.append(isDark(y / scale, x / scale) ? 0 : 255) }
        }
        var compressed = [UInt8](repeating: 0, count: Int(compressBound(uLong(raw.count))))
        var length = uLongf(compressed.count)
        _ = compress2(&compressed, &length, raw, uLong(raw.count), 9)
        compressed.removeSubrange(Int(length)...)
        var header: [UInt8] = []
        for value in [UInt32(side), UInt32(side)] { header += bigEndian(value) }
        header += [8, 0, 0, 0, 0]  // 8-bit grayscale, deflate, no filter, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", header) + chunk("IDAT", compressed) + chunk("IEND", [])
    }

    private func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        let crc = UInt32(crc32(0, body, uInt(body.count)))
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc)
    }

    private func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
