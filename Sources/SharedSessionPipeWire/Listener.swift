internal import CPipeWire

/// The memory of one PipeWire listener: its `spa_hook` and its events table (`pw_node_events`,
/// `pw_core_events`…), allocated together when their owner is made and freed together when it goes.
/// The owner adds the hook to an object with ``add(_:)``, and takes it off with ``remove()`` before
/// it destroys the object (or calls ``objectDestroyed()`` when destroying the object took its
/// listeners with it, as `pw_stream_destroy` does), so PipeWire never calls into freed memory.
/// Loop thread (or the loop lock held) only.
final class Listener<Events> {
    let hook: UnsafeMutablePointer<spa_hook>
    let events: UnsafeMutablePointer<Events>
    /// Whether the hook is on an object's listener list now.
    private(set) var isAdded = false

    /// Allocates the hook and the table, filled by `fill` from `empty` (the table with every callback nil).
    init(_ empty: Events, fill: (UnsafeMutablePointer<Events>) -> Void) {
        hook = .allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        events = .allocate(capacity: 1)
        events.initialize(to: empty)
        fill(events)
    }

    deinit {
        hook.deinitialize(count: 1)
        hook.deallocate()
        events.deinitialize(count: 1)
        events.deallocate()
    }

    /// Adds the hook to an object's listeners with `add` (a `…_add_listener` of the object).
    func add(_ add: (UnsafeMutablePointer<spa_hook>, UnsafeMutablePointer<Events>) -> Void) {
        add(hook, events)
        isAdded = true
    }

    /// Takes the hook off the object's listeners, if it is on them: before the object is destroyed.
    func remove() {
        guard isAdded else { return }
        spa_hook_remove(hook)
        isAdded = false
    }

    /// The object was destroyed with its listener list: the hook is on no list any more.
    func objectDestroyed() {
        isAdded = false
    }
}
