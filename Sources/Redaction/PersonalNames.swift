extension NameClass {
    /// A class that claims only values of its kind (a date under `dob`, coordinates under
    /// `location`, a token under `idfa`): any other value under such a name is scanned as text.
    var isValueGated: Bool {
        switch self {
        case .birthDate, .address, .place, .coordinate, .ipAddress, .cardExpiry, .person, .personGroup, .identifier: return true
        default: return false
        }
    }
}

/// The names of personal data other than emails, phones and cards: what a name says a value
/// is (`NameMatcher.classify`), and what a member means inside an object whose name set the
/// scope (`role(of:in:)`: the `name` of a `recipient`, the `line1` of an `address`, the `lat`
/// of a `location`).
enum PersonalNames {

    /// Whether a secret name counts rather than holds: a plural secret word at its end, or a
    /// count qualifier right before its secret word.
    static func isCount(_ words: [String]) -> Bool {
        if let last = words.last, pluralSecretWords.contains(last) { return true }
        guard words.count >= 2 else { return false }
        for k in 1..<words.count where NameMatcher.secretWordSet.contains(words[k]) || pluralSecretWords.contains(words[k]) {
            if countQualifiers.contains(words[k - 1]) { return true }
        }
        return false
    }

    /// What `words` (a name's, `NameMatcher.words`) say about personal data, or nil.
    static func classify(_ words: [String]) -> NameClass? {
        if isIPAddress(words) { return .ipAddress }
        if isBirthDate(words) { return .birthDate }
        if isCardExpiry(words) { return .cardExpiry }
        if let address = words.lastIndex(where: { $0 == "address" || $0 == "street" || $0 == "addresses" }) {
            let before = address > 0 ? words[address - 1] : ""
            let after = words[(address + 1)...]
            if !nonPostalAddress.contains(before), !after.contains(where: addressDescribers.contains),
               !after.contains(where: NameMatcher.describingWords.contains), !words.contains(where: { $0 == "ip" || $0 == "email" }) {
                return .address
            }
        }
        if words.contains(where: latitudeWords.contains), words.contains(where: personalPlaceQualifiers.contains) {
            return .coordinate
        }
        if let last = words.last, placeWords.contains(last) { return .place }
        if let last = words.last, namedPersonWords.contains(last) { return .person }
        if let last = words.last, personWords.contains(last) { return .personGroup }
        // `billing_details`, `customer_info`, `recipient_data`.
        if words.count >= 2, ["details", "info", "information", "data", "profile"].contains(words[words.count - 1]),
           personWords.contains(words[words.count - 2]) || namedPersonWords.contains(words[words.count - 2]) {
            return .personGroup
        }
        return nil
    }

    private static func isIPAddress(_ words: [String]) -> Bool {
        if let last = words.last, NameMatcher.describingWords.contains(last) && last != "address" { return false }
        if words.contains(where: { $0 == "ip" || $0 == "ips" || $0 == "ipv4" || $0 == "ipv6" || $0 == "ipaddr" || $0 == "ipaddress" }) {
            return true
        }
        if words.contains("forwarded") && (words.last == "for" || words == ["forwarded"]) { return true }
        let joined = words.joined(separator: " ")
        return joined == "x real ip" || joined.hasSuffix("remote addr") || joined.hasSuffix("client addr")
            || joined.hasSuffix("remote address") || joined.hasSuffix("connecting ip")
    }

    private static func isBirthDate(_ words: [String]) -> Bool {
        guard let at = words.firstIndex(where: { $0 == "birth" || $0 == "birthdate" || $0 == "birthday" || $0 == "dob" })
        else { return false }
        // `birth_date_format`, `dobVerified`: about the date, not the date.
        let after = words[(at + 1)...].filter { $0 != "date" && $0 != "day" && $0 != "year" && $0 != "on" }
        return !after.contains(where: NameMatcher.describingWords.contains) && words.first != "place"
            && !words.contains("place") && !words.contains("country") && !words.contains("city")
    }

    private static func isCardExpiry(_ words: [String]) -> Bool {
        guard let at = words.firstIndex(where: expiryWords.contains) else { return false }
        let rest = words[(at + 1)...]
        // `exp_month`, `expiry_year`, `expiration_date`, a bare `expiry`, `card_expiration`.
        if rest.count == 1, ["month", "year", "date", "mm", "yy", "yyyy"].contains(rest.first!) { return words[at] != "expires" }
        // A bare `exp` is a JWT's claim; `card_exp`, `cc_exp` are a card's (and only a value
        // shaped as one is claimed).
        let afterCard = at > 0 && ["card", "cc", "credit", "debit", "payment"].contains(words[at - 1])
        if rest.isEmpty && words[at] != "expires" { return words[at] == "exp" ? afterCard : at == 0 || afterCard }
        return false
    }

    /// Names whose value is a credential or tracks a device when it looks like a token
    /// (`NameClass.bareKey`): advertising ids, push registrations, Wi-Fi BSSIDs, telemetry
    /// team keys.
    static func isIdentifier(_ words: [String]) -> Bool {
        let joined = words.joined(separator: " ")
        if identifierNames.contains(joined) { return true }
        guard let last = words.last else { return false }
        if identifierLastWords.contains(last) { return true }
        return identifierEndings.contains(where: { joined.hasSuffix($0) && (joined == $0 || joined.hasSuffix(" " + $0)) })
    }

    /// What a name means as a member of a scoped object, computed once per name (`NameMemo`).
    struct Roles: OptionSet {
        let rawValue: UInt8
        /// A person's name in a person's object (`name`).
        static let personsName = Roles(rawValue: 1 << 0)
        /// An address line in an address (`line1`, `zip`).
        static let addressLine = Roles(rawValue: 1 << 1)
        /// A person's name in an address (`name`).
        static let addresseesName = Roles(rawValue: 1 << 2)
        /// A latitude or longitude in a place (`lat`).
        static let coordinate = Roles(rawValue: 1 << 3)
        /// The name describes a value rather than holds it (`token_type`, `expires_in`).
        static let describes = Roles(rawValue: 1 << 4)
        /// A bare `name`: a person's in an object with a personal member beside it.
        static let bareName = Roles(rawValue: 1 << 5)
        /// A personal member (an email, a phone, a birth date, a person's name, an address),
        /// which makes its object one about a person (`NameMemo` adds the classes).
        static let personal = Roles(rawValue: 1 << 6)
    }

    static func roles(of name: String) -> Roles {
        let words = NameMatcher.nameWords(name)
        var roles: Roles = []
        if role(of: words, in: .person) == .personName { roles.insert(.personsName) }
        switch role(of: words, in: .address) {
        case .address?: roles.insert(.addressLine)
        case .personName?: roles.insert(.addresseesName)
        default: break
        }
        if role(of: words, in: .place) == .coordinate { roles.insert(.coordinate) }
        if words.contains(where: { NameMatcher.describingWords.contains($0) || NameMatcher.durationWords.contains($0) }) {
            roles.insert(.describes)
        }
        if words == ["name"] { roles.insert(.bareName) }
        if words.last == "email" || words == ["email", "address"] || words == ["e", "mail"] { roles.insert(.personal) }
        return roles
    }

    /// What a member with `roles` is in an object under `scope`, when its own name says nothing.
    static func role(_ roles: Roles, in scope: NameClass) -> NameClass {
        switch scope {
        case .person: return roles.contains(.personsName) ? .personName : .ordinary
        case .address:
            if roles.contains(.addressLine) { return .address }
            return roles.contains(.addresseesName) ? .personName : .ordinary
        case .place: return roles.contains(.coordinate) ? .coordinate : .ordinary
        default: return .ordinary
        }
    }

    /// What a member of an object under `scope` is, when its own name says nothing (`ordinary`).
    static func role(of words: [String], in scope: NameClass) -> NameClass? {
        switch scope {
        case .person:
            if words == ["name"] || words == ["full", "name"] || words == ["names"] { return .personName }
            return nil
        case .address:
            if words == ["name"] || words == ["full", "name"] { return .personName }
            if words.count == 1, let w = words.first,
               ["line", "line1", "line2", "line3", "address1", "address2", "address3", "street1", "street2", "house",
                "building", "apartment", "apt", "flat", "suite", "unit", "postcode", "zip", "zipcode", "premise",
                "thoroughfare", "postal", "number"].contains(w) {
                return .address
            }
            if words.count == 2, ["line", "postal", "zip", "house", "street", "building", "post", "address"].contains(words[0]),
               ["1", "2", "3", "one", "two", "code", "number", "no", "name", "line1", "line2"].contains(words[1]) {
                return .address
            }
            return nil
        case .place:
            return words.count == 1 && latitudeWords.contains(words[0]) ? .coordinate : nil
        default:
            return nil
        }
    }

    /// The scope an object under a name of `nameClass` gives its members.
    static func scope(of nameClass: NameClass) -> NameClass {
        switch nameClass {
        case .secret, .address, .place, .person: return nameClass
        case .personGroup: return .person
        default: return .ordinary
        }
    }
}
