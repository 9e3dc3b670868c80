import XCTest
@testable import Redaction

/// Street addresses in free text: a street type and a house number make one, in either order
/// and with a name of one to three words; a street's name alone (`Wall Street`), a year after
/// a name (`Abbey Road 1969`) or a time (`Court 5:30`) does not.
final class StreetAddressTests: XCTestCase {
    func testAddressesInText() {
        for (text, expected) in [
            ("Ship to 939 Mike Street, Springfield", "Ship to redacted-1, Springfield"),
            ("I live at 221B Baker St. now", "I live at redacted-1 now"),
            ("office: 350 5th Avenue, NY", "office: redacted-1, NY"),
            ("at 1600 Martin Luther King Blvd", "at redacted-1"),
            ("Please deliver to Hollybush Road 88 tomorrow", "Please deliver to redacted-1 tomorrow"),
            ("Juniper Court 86a, 3rd floor", "redacted-1, 3rd floor"),
            ("Indirizzo: Via Roma 12, Milano", "Indirizzo: redacted-1, Milano"),
            ("Calle del Prado 5", "redacted-1"),
            ("12 Rue de Rivoli, Paris", "redacted-1, Paris"),
        ] {
            let engine = RedactionEngine()
            let once = scanned(text, engine: engine)
            XCTAssertEqual(once, expected, text)
            XCTAssertEqual(engine.currentReport.counts[.postalAddress]?[.body], 1, text)
            XCTAssertEqual(scanned(once), once, "a second run changed \(text)")
        }
        XCTAssertEqual(body(#"{"delta": {"text": "Sure, I'll send it to Hollybush Road 88."}}"#),
                       #"{"delta": {"text": "Sure, I'll send it to redacted-1."}}"#)
    }

    func testStreetsWithoutAnAddress() throws {
        let config = try configuration(rules: #"{"disable": ["high-entropy"]}"#)
        for text in ["Wall Street rallied", "Abbey Road 1969 remaster", "Supreme Court 5:30 hearing", "on Main Street today",
                     "Step 3 Place the lid", "version 2 Way forward", "St. Louis 2024", "Chapter 12 Court records",
                     "mile 12.5 Highway", "the Via Ferrata", "buy 3 Street Fighter games", "room 101, Grand Plaza",
                     "Road 1.2.3", "1/2 Lane", "Oak Lane 3-Seater Sofa", "Bay Street 5% off", "Park Avenue 2,5 km",
                     "Penny Lane 12/2024", "{\"title\": \"Sunset Boulevard 1950\"}"] {
            XCTAssertEqual(scanned(text, config: config), text, text)
        }
    }
}
