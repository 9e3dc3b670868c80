// Which NetworkMock answers a request: each configuration a mock hands out names its own
// URLProtocol class, and that class knows its mock.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a protocol class sends its requests: a mock's server, and the configuration it was put
/// in (for `timeoutIntervalForRequest`, which a custom protocol is not told on Linux).
struct MockRoute: @unchecked Sendable {
    let server: MockServer
    let configuration: URLSessionConfiguration?

    /// The timeout a request gets: its own `timeoutInterval` when the app set one, else the
    /// configuration's `timeoutIntervalForRequest`.
    func timeout(for request: URLRequest) -> TimeInterval? {
        let requestDefault: TimeInterval = 60
        if request.timeoutInterval != requestDefault || configuration == nil { return request.timeoutInterval }
        return configuration!.timeoutIntervalForRequest
    }
}

/// Routes by protocol class. URLSession gives a protocol only the request; on Linux it does not
/// even add the configuration's `httpAdditionalHeaders` to it, so nothing in the request can say
/// which mock it is for. The class can: every configuration gets a class of its own,
/// `RoutedMockProtocol<Key>` with a distinct `Key` type, so two mocks never share state even when
/// their tests run at the same time.
enum MockRoutes {
    private static let routes = Locked<(next: Int, table: [Int: MockRoute])>((0, [:]))

    /// A new protocol class that sends its requests to `route`.
    static func register(_ route: MockRoute) -> (slot: Int, protocolClass: AnyClass) {
        let slot = routes.withLock { r -> Int in
            defer { r.next += 1 }
            r.table[r.next] = route
            return r.next
        }
        return (slot, protocolClass(forSlot: slot))
    }

    static func route(forSlot slot: Int) -> MockRoute? {
        routes.withLock { $0.table[slot] }
    }

    /// The class for slot `n`: `RoutedMockProtocol` specialized with the type that spells `n` in
    /// bijective base 2 (`SlotBit1<SlotBit2<SlotEnd>>` is 1 + 2·2 = 5). Generic specializations
    /// are distinct classes, so there is no fixed pool of slots to run out of.
    static func protocolClass(forSlot n: Int) -> AnyClass {
        func make<Key: SlotKey>(_: Key.Type) -> AnyClass { RoutedMockProtocol<Key>.self }
        return make(keyType(n))
    }

    private static func keyType(_ n: Int) -> any SlotKey.Type {
        if n == 0 { return SlotEnd.self }
        func wrap<Inner: SlotKey>(_: Inner.Type, odd: Bool) -> any SlotKey.Type {
            odd ? SlotBit1<Inner>.self : SlotBit2<Inner>.self
        }
        return wrap(keyType((n - 1) / 2), odd: n % 2 == 1)
    }
}

/// A type that stands for a slot number (see `MockRoutes.protocolClass(forSlot:)`).
protocol SlotKey { static var slot: Int { get } }
enum SlotEnd: SlotKey { static var slot: Int { 0 } }
enum SlotBit1<Inner: SlotKey>: SlotKey { static var slot: Int { Inner.slot * 2 + 1 } }
enum SlotBit2<Inner: SlotKey>: SlotKey { static var slot: Int { Inner.slot * 2 + 2 } }

/// The protocol class of one configuration made by `NetworkMock.configuration(base:)` (instance
/// or static): it answers from the route registered for its slot.
final class RoutedMockProtocol<Key: SlotKey>: NetworkMock {
    override class var route: MockRoute {
        MockRoutes.route(forSlot: Key.slot) ?? MockRoute(server: NetworkMock.server, configuration: nil)
    }
}
