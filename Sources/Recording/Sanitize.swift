import HTTP1

/// Text safe for a terminal or a log: control characters (C0, DEL, C1) become `\xNN`, so bytes
/// from the wire can never move the cursor, change colours or forge log lines.
public func sanitizedForLog(_ text: String) -> String { sanitizedControlCharacters(text) }
