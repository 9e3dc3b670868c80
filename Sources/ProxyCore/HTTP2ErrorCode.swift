/// RFC 9113 §7 error codes: the ones harrec sends, their names, and the code a recorded
/// `_error` passed on.
package enum HTTP2ErrorCode {
    static let noError: UInt32 = 0x0
    static let protocolError: UInt32 = 0x1
    static let internalError: UInt32 = 0x2
    static let refusedStream: UInt32 = 0x7
    static let cancel: UInt32 = 0x8
    static let connectError: UInt32 = 0xa

    /// RFC 9113 §7's error code names, by code.
    static let names = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
                        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
                        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]

    /// RFC 9113 §7's name for an error code.
    static func name(_ code: UInt32) -> String {
        code < names.count ? names[Int(code)] : "error 0x\(String(code, radix: 16))"
    }

    /// The code of a stream reset harrec passed on to its client, from the `_error` it recorded
    /// (`upstream reset the stream (ENHANCE_YOUR_CALM)`); nil for any other error.
    package static func passedOnReset(_ error: String) -> UInt32? {
        let prefix = "upstream reset the stream (", suffix = ")"
        guard error.hasPrefix(prefix), error.hasSuffix(suffix) else { return nil }
        let name = error.dropFirst(prefix.count).dropLast(suffix.count)
        if let index = names.firstIndex(where: { $0 == name }) { return UInt32(index) }
        guard name.hasPrefix("error 0x") else { return nil }
        return UInt32(name.dropFirst("error 0x".count), radix: 16)
    }
}
