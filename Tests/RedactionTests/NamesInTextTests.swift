import XCTest
@testable import Redaction

/// Person names in free text, found by what introduces them: a title, a greeting or sign-off,
/// `my name is`, or a word for a person before a first and last name. Capitalized words with
/// no such cue, and cues followed by words that are no name, stay.
final class NamesInTextTests: XCTestCase {
    func testNamesAfterACue() {
        assertScans([
            ("Happy birthday Chiara! Love, Wilhelmina", "Happy birthday person-1! Love, person-2"),
            ("Customer Amelie Fairbanks, born 1964-06-06", "Customer person-1, born 1970-01-01"),
            ("The customer Fiona Petrakis lives at ", "The customer person-1 lives at "),
            ("Hi Anna, your order shipped.", "Hi person-1, your order shipped."),
            ("Dear Mr. O'Brien,", "Dear Mr. person-1,"),
            ("Referred by Dr. Karl Lindqvist.", "Referred by Dr. person-1."),
            ("Hello, my name is Jean-Luc Picard and I", "Hello, my name is person-1 and I"),
            ("Thanks,\nØdegaard", "Thanks,\nperson-1"),
            ("a passenger Maria Garcia Lopez boarded", "a passenger person-1 boarded"),
        ])
        // The same name gets the same placeholder as under a JSON name.
        XCTAssertEqual(body(#"{"full_name": "Fiona Petrakis", "note": "Hi Fiona Petrakis!"}"#),
                       #"{"full_name": "person-1", "note": "Hi person-1!"}"#)
    }

    func testCapitalizedWordsThatAreNoNames() throws {
        let config = try configuration(rules: #"{"disable": ["high-entropy"]}"#)
        for text in ["Rose Gold iPhone", "Hi There", "Hello World", "Dear Valued Customer", "Customer Service Team",
                     "Guest Checkout Button", "contact Us Today", "I love Paris", "the best Pizza in town",
                     "Member Benefits Program Overview", "This is Amazing", "user ID", "Thanks Again",
                     "Dr. 12", "Mr. API", "Customer Support", "a file named Foo", "Hello, I'm Bob's friend", "if name is None:",
                     "Compatibility layers for Bonjour APIs"] {
            XCTAssertEqual(scanned(text, config: config), text, text)
        }
    }
}
