// The vocabulary of names and text: which words make a name secret, personal, a count or a
// description, and which words in text introduce a value. Data, kept apart from the code that
// reads it, so the words can be reviewed (and grown) in one place.

// What the words of a name say (`NameMatcher.classify`).
extension NameMatcher {
    static let secretWords: [String] = [
        "token", "tokens", "secret", "secrets", "password", "passwords", "passwd", "pwd", "pass", "passphrase",
        "passcode", "pin", "auth", "authorization", "credential", "credentials", "creds", "signature", "sig",
        "session", "sessionid", "sid", "otp", "totp", "hotp", "mfa", "csrf", "xsrf", "cookie", "jwt", "apikey",
        "privatekey", "bearer", "saml", "assertion", "pw", "key",
        // Session cookies of common servers, also in URLs (`;jsessionid=...`).
        "jsessionid", "phpsessid", "sessid", "aspsessionid", "cfid", "cftoken",
        // OAuth PKCE and OAuth 1 verifiers, and identity documents.
        "verifier", "passport", "nino", "aadhaar", "mnemonic",
    ]

    /// Multi-word runs: keys with a qualifier, and codes that are credentials.
    static let secretWordRuns: [[String]] = [
        ["api", "key"], ["access", "key"], ["secret", "key"], ["private", "key"], ["client", "key"], ["auth", "key"],
        ["master", "key"], ["signing", "key"], ["encryption", "key"], ["subscription", "key"], ["app", "key"],
        ["consumer", "key"], ["license", "key"], ["account", "key"], ["storage", "key"], ["service", "key"],
        ["x", "key"], ["admin", "key"], ["server", "key"], ["shared", "key"], ["session", "key"], ["user", "key"],
        ["auth", "code"], ["authorization", "code"], ["verification", "code"], ["reset", "code"], ["recovery", "code"],
        ["recovery", "codes"], ["backup", "code"], ["backup", "codes"], ["confirmation", "code"], ["sms", "code"],
        ["security", "answer"], ["account", "number"], ["routing", "number"], ["ssn"], ["social", "security"],
        ["tax", "id"], ["connection", "string"], ["dsn"],
        ["national", "id"], ["national", "insurance"], ["ni", "number"], ["tax", "number"], ["identity", "number"],
        ["driver", "license"], ["drivers", "license"], ["driver", "licence"], ["driving", "licence"],
        ["seed", "phrase"], ["seed", "words"], ["recovery", "phrase"], ["backup", "phrase"], ["wallet", "seed"],
    ]

    /// Qualifiers after which `key` names no secret: public keys, database keys, cache keys.
    static let innocentKeyQualifiers: Set<String> = [
        "public", "pub", "primary", "foreign", "sort", "partition", "cache", "idempotency", "dedupe", "dedup", "hot",
        "row", "hash", "range", "lookup", "i18n", "translation", "locale", "message", "string", "websocket",
        "composite", "unique", "shortcut", "object", "item", "entity", "resource", "event", "metric", "feature",
        "flag", "field", "column", "index", "group", "react", "list", "map", "sec", "registry",
    ]

    /// Words that describe a secret rather than hold it, when they follow the secret word.
    static let describingWords: Set<String> = [
        "type", "types", "kind", "expires", "expiry", "expiration", "exp", "ttl", "lifetime", "duration", "timeout",
        "length", "count", "url", "uri", "endpoint", "name", "names", "format", "required", "enabled", "policy",
        "hint", "label", "status", "version", "scope", "scopes", "strength", "changed", "updated", "created",
        "present", "set", "valid", "location", "path", "field", "fields", "header", "method", "mode", "algorithm",
        "alg", "min", "max", "minimum", "maximum", "rules", "rule", "requirements", "regex", "pattern", "placeholder",
        "visible", "visibility", "mask", "masked", "redacted", "prompt", "error", "errors", "message", "input",
        "provider", "providers", "scheme", "schemes", "flow", "server", "domain", "host", "config", "settings",
        "options", "start", "started", "end", "ended", "at", "time", "timestamp", "date", "since", "until", "sent",
        "verified", "channel", "attempts", "retries", "remaining", "issuer", "audience", "source", "storage",
        "store", "manager", "service", "enforced", "supported", "allowed", "reset", "age", "history", "last",
        "size", "len", "index", "prefix", "suffix", "level", "lifespan", "refresh", "generated", "used", "usage",
        "limit", "limits", "validity", "consent", "banner", "preferences", "accepted", "dismissed",
        "days", "hours", "minutes", "seconds", "attempts", "tries", "rotation", "interval", "period",
    ]

    static let durationWords: Set<String> = ["in", "secs", "ms", "millis", "window", "delay", "backoff"]

    static let versionWords: Set<String> = ["version", "versions", "ver", "firmware", "build", "release", "fw"]

    static let personRuns: [[String]] = [
        ["first", "name"], ["last", "name"], ["full", "name"], ["given", "name"], ["family", "name"],
        ["display", "name"], ["middle", "name"], ["surname"], ["nickname"], ["nick", "name"], ["legal", "name"],
        ["maiden", "name"], ["username"], ["user", "name"], ["contact", "name"], ["holder", "name"],
        ["cardholder", "name"], ["cardholder"], ["account", "holder"], ["owner", "name"], ["customer", "name"],
        ["recipient", "name"], ["sender", "name"], ["billing", "name"], ["shipping", "name"], ["firstname"],
        ["lastname"], ["fullname"], ["givenname"], ["familyname"], ["displayname"], ["person", "name"],
        ["patient", "name"], ["author", "name"], ["device", "name"], ["computer", "name"],
    ]

    static let phoneWords: Set<String> = [
        "phone", "phones", "mobile", "tel", "telephone", "msisdn", "cell", "cellphone", "fax", "whatsapp",
        "phonenumber", "mobilenumber", "landline",
    ]

    static let cardRuns: [[String]] = [
        ["card", "number"], ["card", "no"], ["card", "num"], ["cc", "number"], ["pan"], ["credit", "card"],
        ["cardnumber"], ["ccnum"], ["card", "pan"], ["primary", "account", "number"],
    ]

    static let cardCodeWords: Set<String> = ["cvc", "cvv", "cvv2", "cvc2", "csc", "cvn"]

    static let cardCodeRuns: [[String]] = [["security", "code"], ["card", "code"], ["card", "verification"]]
}

// Names of personal data, and the members of an object about a person, an address or a place
// (`PersonalNames`).
extension PersonalNames {
    /// Words before a secret word that make the name a count (`max_tokens`, `prompt_tokens`).
    static let countQualifiers: Set<String> = [
        "max", "min", "total", "num", "prompt", "completion", "input", "output", "cached", "cache", "reasoning",
        "remaining", "used", "billed", "estimated", "context", "predicted", "accepted", "rejected", "audio",
        "image", "text", "thinking", "read", "creation", "generated", "request", "response", "candidates",
    ]

    /// Plural secret words: a name ending in one counts (`tokens`) unless its value is a list.
    static let pluralSecretWords: Set<String> = ["tokens", "secrets", "passwords", "credentials", "sessions"]

    /// Words that may follow a phone word (`phone_landline`, `homePhoneNumber`).
    static let phoneQualifiers: Set<String> = [
        "number", "no", "num", "e164", "landline", "home", "work", "office", "mobile", "cell", "primary", "secondary",
        "alt", "alternate", "alternative", "formatted", "national", "international", "raw", "display", "value",
        "text", "fixed", "direct", "personal", "private", "business", "emergency", "contact",
    ]

    /// Words before `address` that make it no postal address.
    static let nonPostalAddress: Set<String> = [
        "ip", "email", "mail", "e", "mac", "server", "host", "web", "url", "contract", "wallet", "token", "remote",
        "local", "bind", "listen", "listening", "proxy", "gateway", "dns", "bitcoin", "btc", "eth", "ethereum",
        "crypto", "deposit", "withdrawal", "reply", "from", "to", "cc", "bcc", "public", "memory", "base", "network",
        "socket", "peer", "node", "multicast", "broadcast", "sip", "ipv4", "ipv6", "hardware", "bluetooth", "ble",
        "wifi", "account", "payment", "sender", "receiver", "destination", "source", "origin", "target", "return",
        "callback", "webhook", "endpoint", "service", "api", "relay", "smtp", "xmpp", "jid", "onion", "vpn",
        "lan", "wan", "nat", "router", "device", "link", "ethernet", "vm", "instance",
    ]

    /// Words after `address` (or `street`) that name something about it, not its text.
    static let addressDescribers: Set<String> = [
        "id", "ids", "type", "types", "kind", "count", "verified", "validated", "valid", "status", "format",
        "required", "enabled", "label", "hint", "source", "book", "list", "index", "key", "version", "changed",
        "updated", "created", "at", "match", "score", "level", "mode", "family", "space", "range", "prefix",
    ]

    /// Words that name a place a person is at (`location`, `home`), for lat/long.
    static let placeWords: Set<String> = [
        "location", "locations", "home", "device", "gps", "coords", "coordinates", "coordinate", "position",
        "geo", "geolocation", "latlng", "latlong", "geopoint", "whereabouts", "checkin", "pickup", "dropoff",
    ]

    /// Qualifiers before a latitude or longitude that make it a person's place (`home_lat`).
    static let personalPlaceQualifiers: Set<String> = [
        "home", "device", "user", "current", "last", "gps", "my", "customer", "driver", "rider", "courier",
        "pickup", "dropoff", "delivery", "live", "precise", "exact", "client",
    ]

    static let latitudeWords: Set<String> = ["lat", "latitude", "lng", "lon", "long", "longitude"]

    /// Words for a person at the end of a name: an object under one has a person's `name`.
    static let personWords: Set<String> = [
        "recipient", "sender", "beneficiary", "payee", "payer", "addressee", "consignee", "passenger", "patient",
        "guest", "traveler", "traveller", "contact", "owner", "customer", "user", "author", "member", "employee",
        "driver", "buyer", "shopper", "billing", "shipping", "cardholder", "applicant", "insured",
        "policyholder", "attendee", "participant", "student", "signer", "signatory", "guardian", "spouse",
        "tenant", "landlord", "profile", "me", "person",
    ]

    /// Of `personWords`, those where a string value (not an object) is itself a person's name.
    static let namedPersonWords: Set<String> = [
        "recipient", "sender", "beneficiary", "payee", "payer", "addressee", "consignee", "passenger", "patient",
        "cardholder", "signer", "signatory", "guardian", "insured", "policyholder",
    ]

    /// Words for a card's expiry; a bare `exp` is a JWT's claim, not a card's.
    static let expiryWords: Set<String> = ["expiry", "expiration", "exp", "expires", "expire"]

    static let identifierNames: Set<String> = ["mac", "ifa", "ssaid"]
    /// Last words of a name that identify a device, an ad profile or a push registration.
    static let identifierLastWords: Set<String> = ["idfa", "idfv", "gaid", "aaid", "adid", "bssid", "apns", "fcm", "gcm", "team"]
    /// Words a name ends with that identify a device or an end user (`end_user_id`, an LLM
    /// API's `safety_identifier`).
    static let identifierEndings = [
        "advertising id", "advertising identifier", "ad id", "android id", "registration id", "registration ids",
        "registration token", "push id", "vendor id", "device fingerprint", "instance id", "mac address", "mac", "ifa",
        "wifi mac", "end user id", "end user identifier", "enduser id", "safety identifier",
    ]

    /// The words of a real name's parts: a member named so is personal (a `username` or a
    /// `displayName` is not, products have them too).
    static let realNameWords: Set<String> = [
        "first", "last", "given", "family", "surname", "middle", "firstname", "lastname", "givenname", "familyname", "maiden",
    ]
}

// Person names in text (`nameInText`).
extension RedactionEngine {
    /// Titles before a name (the title stays).
    static let titleCues = ["mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame", "herr", "frau", "sr", "sra",
                            "mme", "mlle", "signor", "signora"]
    /// Greetings before a name (`name` stands for `my name is`).
    static let greetingCues = ["hi", "hello", "hey", "dear", "hallo", "hola", "ciao", "birthday", "congratulations",
                               "congrats", "name"]
    /// Sign-offs before a name, after their comma.
    static let signOffCues = ["love", "regards", "cheers", "sincerely", "best", "xoxo", "yours", "thanks"]
    /// Words for a person before a first and last name.
    static let personCues = [
        "customer", "client", "patient", "passenger", "recipient", "sender", "guest", "member", "employee", "driver",
        "tenant", "applicant", "cardholder", "beneficiary", "payee", "attendee", "contact", "user", "buyer", "seller",
        "traveler", "traveller", "student", "candidate", "caller", "courier",
    ]

    /// Capitalized words that follow a cue and are no name (`Hi There`, `Customer Service Team`,
    /// `Dear Valued Customer`).
    static let notNames: Set<String> = [
        "There", "All", "Everyone", "Everybody", "Team", "Customer", "Customers", "Sir", "Madam", "Friend", "Friends",
        "User", "Users", "Guest", "Guests", "World", "Folks", "Guys", "Again", "Back", "Support", "Admin", "Mom", "Dad",
        "You", "Valued", "Member", "Members", "Service", "Services", "Care", "Success", "Portal", "Account", "Accounts",
        "Settings", "Name", "Names", "Details", "Info", "Information", "Profile", "Data", "List", "Group", "Type",
        "Status", "Id", "Number", "Center", "Centre", "Experience", "Journey", "Agent", "Reviews", "Review",
        "Feedback", "Login", "Sign", "Wishes", "Regards", "Thanks", "Day", "Morning", "Evening", "Afternoon", "Night",
        "New", "Year", "Happy", "Birthday", "Christmas", "Holidays", "Week", "Weekend", "Guide", "Manager",
        "Dashboard", "Page", "Home", "App", "Web", "Mobile", "Api", "The", "This", "That", "Your", "Our", "My", "And",
        "Or", "For", "From", "With", "Ltd", "Inc", "Company", "Corp", "Bank", "Store", "Shop", "Order", "Us", "Party",
        "Card", "Cake", "Gift", "Sale", "Since", "Only", "Area", "Access", "Pass", "Checkout", "Mode", "Portal",
    ]
}

// Street addresses in text (`streetAddress`).
extension RedactionEngine {
    /// Street types written after the street's name (with or without a period when short).
    static let streetSuffixes: Set<String> = [
        "Street", "St", "Road", "Rd", "Avenue", "Ave", "Lane", "Ln", "Drive", "Court", "Ct", "Way", "Place", "Pl",
        "Boulevard", "Blvd", "Terrace", "Crescent", "Close", "Square", "Sq", "Parkway", "Pkwy", "Highway", "Hwy",
        "Row", "Mews", "Gardens", "Grove", "Circle", "Cir", "Loop", "Trail", "Walk", "Alley", "Plaza",
    ]

    /// Street types written before it (Romance languages).
    static let streetPrefixes: Set<String> = ["Via", "Viale", "Rue", "Calle", "Avenida", "Rua", "Piazza", "Corso", "Carrer"]

    /// Short words inside a street's name (`rue de la Paix`, `Calle del Prado`).
    static let streetParticles: Set<String> = ["de", "del", "della", "la", "le", "les", "du", "des", "da", "do", "dos", "di", "of", "the"]
}

// One-time codes in text (`oneTimeCode`).
extension RedactionEngine {
    /// Words before `code` that make it a one-time code.
    static let codeQualifiers: Set<String> = [
        "verification", "security", "login", "one-time", "onetime", "confirmation", "access", "sign-in", "signin",
        "2fa", "authentication", "auth", "otp", "your", "sms", "reset", "activation", "pairing", "mfa", "temporary",
        "single-use", "recovery", "backup", "magic", "passcode", "authorization", "validation", "unlock", "the",
    ]
}

// URL user names and client addresses in text (`userinfo`, `ipv4`).
extension RedactionEngine {
    /// User names that identify a protocol, not a person: `ssh://git@github.com/org/app.git`.
    static let serviceUserNames: Set<String> = ["git", "hg", "svn", "anonymous", "ftp", "guest", "ubuntu", "ec2-user"]

    /// Words after which an address in text is a client's.
    static let addressWords: Set<String> = [
        "from", "ip", "ipv4", "ipv6", "client", "addr", "address", "src", "source", "remote", "peer", "origin", "forwarded",
        "user", "login", "device", "connecting", "visitor", "caller",
    ]
}

// Values that are code, not literals (`isCodeExpression`).
extension RedactionEngine {
    /// Names a program's code may start an expression with: `process.env.API_KEY`.
    static let codeRoots: Set<String> = [
        "process", "os", "self", "this", "config", "configuration", "env", "settings", "ENV", "System", "Environment",
        "window", "ProcessInfo", "Bundle", "context", "ctx", "args", "params", "req", "request", "options", "opts",
        "props", "import", "secrets", "credentials", "keychain", "Keychain", "UserDefaults", "vault", "app", "cfg",
    ]
}
