// Simulated WebSocket traffic: NetworkMock never handles ws/wss, so recorded server messages are
// delivered to the app's WebSocket stand-in when a named trigger fires.

import Foundation
#if canImport(Darwin)
import CoreFoundation
#endif

/// A simulated WebSocket event.
public enum WebSocketEvent: Sendable, Equatable {
    /// A text message.
    case text(String)
    /// A binary message.
    case binary(Data)
    /// The server closing the connection with a close code (1000: normal) and reason.
    case close(code: Int, reason: String)
}

/// What an app's WebSocket service adopts (or a simulator stands in for) in test builds.
public protocol WebSocketSimulating: AnyObject {
    /// Handles one event as if the server had sent it.
    func simulateReceive(event: WebSocketEvent)
}

/// A ready-made WebSocketSimulating that records what it received and forwards to a handler.
public final class WebSocketSimulator: WebSocketSimulating, @unchecked Sendable {
    private let events = Locked<[WebSocketEvent]>([])
    private let onReceive: (@Sendable (WebSocketEvent) -> Void)?

    /// Creates a simulator; `onReceive` is called for each event, on the posting thread.
    public init(onReceive: (@Sendable (WebSocketEvent) -> Void)? = nil) {
        self.onReceive = onReceive
    }

    /// Records `event`, then forwards it to the handler.
    public func simulateReceive(event: WebSocketEvent) {
        events.withLock { $0.append(event) }
        onReceive?(event)
    }

    /// Every event received so far, in order.
    public var receivedEvents: [WebSocketEvent] { events.snapshot }
}

/// Named triggers. `register` binds a trigger name to events delivered to a simulator;
/// `post` fires it. On Apple platforms a trigger is also observed as the Darwin notification
/// `"harrec.trigger.<name>"`, so a UI test process can post it into the app; on Linux (and always)
/// `post` delivers in-process.
///
/// Registering a name again adds to it: `post` then delivers every registration in the order they
/// were made, each registration's events in order. The center keeps its simulators alive until
/// `removeAll`.
public final class WebSocketTriggerCenter: @unchecked Sendable {
    /// The center generated `register(with:)` functions use by default.
    public static let shared = WebSocketTriggerCenter()

    /// The Darwin notification name prefix; a UI test posts `"harrec.trigger." + trigger`.
    public static let darwinNotificationPrefix = "harrec.trigger."

    private struct Registration {
        var events: [WebSocketEvent]
        var simulator: any WebSocketSimulating
    }

    private struct State {
        var order: [String] = []
        var registrations: [String: [Registration]] = [:]
    }

    private let state = Locked(State())

    /// Creates an empty center.
    public init() {}

    deinit {
        #if canImport(Darwin)
        stopObservingDarwinNotifications()
        #endif
    }

    /// Binds `trigger` to `events`, delivered in order to `simulator` when the trigger is posted.
    public func register(_ trigger: String, events: [WebSocketEvent], to simulator: any WebSocketSimulating) {
        let isNew = state.withLock { s -> Bool in
            let isNew = s.registrations[trigger] == nil
            if isNew { s.order.append(trigger) }
            s.registrations[trigger, default: []].append(Registration(events: events, simulator: simulator))
            return isNew
        }
        #if canImport(Darwin)
        if isNew { observeDarwinNotification(for: trigger) }
        #else
        _ = isNew
        #endif
    }

    /// Delivers the events registered for `trigger` on the calling thread; nothing when unknown.
    public func post(_ trigger: String) {
        // Copied out of the lock: a simulator may register or post from its handler.
        let registrations = state.withLock { $0.registrations[trigger] ?? [] }
        for registration in registrations {
            for event in registration.events {
                registration.simulator.simulateReceive(event: event)
            }
        }
    }

    /// The registered trigger names, in the order they were first registered.
    public var registeredTriggers: [String] { state.withLock { $0.order } }

    /// Forgets every trigger and releases the simulators.
    public func removeAll() {
        state.withLock { $0 = State() }
        #if canImport(Darwin)
        stopObservingDarwinNotifications()
        #endif
    }

    #if canImport(Darwin)
    private func observeDarwinNotification(for trigger: String) {
        let center = CFNotificationCenterGetDarwinNotifyCenter()
        let observer = Unmanaged.passUnretained(self).toOpaque()
        let name = WebSocketTriggerCenter.darwinNotificationPrefix + trigger
        CFNotificationCenterAddObserver(center, observer, { _, observer, name, _, _ in
            guard let observer, let cfName = name?.rawValue else { return }
            let raw = cfName as String
            let center = Unmanaged<WebSocketTriggerCenter>.fromOpaque(observer).takeUnretainedValue()
            center.post(String(raw.dropFirst(WebSocketTriggerCenter.darwinNotificationPrefix.count)))
        }, name as CFString, nil, .deliverImmediately)
    }

    /// Posts the Darwin notification for `trigger`, so another process (a UI test) fires it in the
    /// app. Apple platforms only.
    public static func postDarwinNotification(_ trigger: String) {
        let name = CFNotificationName((darwinNotificationPrefix + trigger) as CFString)
        CFNotificationCenterPostNotification(CFNotificationCenterGetDarwinNotifyCenter(), name, nil, nil, true)
    }

    private func stopObservingDarwinNotifications() {
        let observer = Unmanaged.passUnretained(self).toOpaque()
        CFNotificationCenterRemoveEveryObserver(CFNotificationCenterGetDarwinNotifyCenter(), observer)
    }
    #endif
}
