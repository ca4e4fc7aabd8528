/// A first-in-first-out queue of waiters that any waiter can leave in O(1), wherever it stands.
///
/// A doubly linked list whose nodes live in one array and are reused through a free list: appending, taking
/// the oldest and removing any waiter by its ``Handle`` each cost O(1), and memory is proportional to the
/// most waiters present at once. A node can be claimed before it joins the queue (``claim(_:)``), so a waiter
/// can be reached by its handle from the moment it arrives (a deadline timer or a cancellation handler that
/// fires before it has queued) until it leaves. A handle outlives its node harmlessly: the node's
/// generation changes when it is reused, and a stale handle finds nothing.
struct WaiterQueue<Element> {
    /// Where one waiter sits: a node index and the generation it was claimed under.
    struct Handle: Hashable, Sendable {
        fileprivate let index: Int
        /// Unique among every handle this queue has issued (a permit can carry it as its token).
        let generation: UInt64
    }

    private struct Node {
        var element: Element?
        var generation: UInt64 = 0
        var isQueued = false
        var previous = -1
        var next = -1
    }

    private var nodes: [Node] = []
    /// Free nodes, linked through `next`.
    private var firstFree = -1
    private var head = -1
    private var tail = -1
    private var generations: UInt64 = 0
    /// Waiters in the queue (claimed nodes that have not joined it are not counted).
    private(set) var count = 0

    /// An empty queue with room for `capacity` waiters before it grows.
    init(capacity: Int = 0) {
        nodes.reserveCapacity(max(0, capacity))
    }

    /// Whether nobody is queued.
    var isEmpty: Bool { count == 0 }

    /// Claims a node for `element` without queueing it yet.
    mutating func claim(_ element: Element) -> Handle {
        generations &+= 1
        let index: Int
        if firstFree >= 0 {
            index = firstFree
            firstFree = nodes[index].next
            nodes[index] = Node(element: element, generation: generations)
        } else {
            index = nodes.count
            nodes.append(Node(element: element, generation: generations))
        }
        return Handle(index: index, generation: generations)
    }

    /// The element of a claimed or queued waiter; `nil` once it has left.
    subscript(handle: Handle) -> Element? {
        get { isCurrent(handle) ? nodes[handle.index].element : nil }
        set {
            guard isCurrent(handle), let newValue else { return }
            nodes[handle.index].element = newValue
        }
    }

    /// Puts a claimed waiter at the back of the queue.
    mutating func enqueue(_ handle: Handle) {
        guard isCurrent(handle), !nodes[handle.index].isQueued else { return }
        nodes[handle.index].isQueued = true
        nodes[handle.index].previous = tail
        nodes[handle.index].next = -1
        if tail >= 0 { nodes[tail].next = handle.index } else { head = handle.index }
        tail = handle.index
        count += 1
    }

    /// Claims a node for `element` and queues it at the back.
    mutating func append(_ element: Element) -> Handle {
        let handle = claim(element)
        enqueue(handle)
        return handle
    }

    /// Removes the oldest queued waiter and returns it with its handle.
    mutating func popFirst() -> (handle: Handle, element: Element)? {
        guard head >= 0 else { return nil }
        let handle = Handle(index: head, generation: nodes[head].generation)
        guard let element = remove(handle) else { return nil }
        return (handle, element)
    }

    /// Removes the newest queued waiter and returns it with its handle.
    mutating func popLast() -> (handle: Handle, element: Element)? {
        guard tail >= 0 else { return nil }
        let handle = Handle(index: tail, generation: nodes[tail].generation)
        guard let element = remove(handle) else { return nil }
        return (handle, element)
    }

    /// Takes a waiter out (queued or only claimed) and frees its node; `nil` when it had already left.
    @discardableResult
    mutating func remove(_ handle: Handle) -> Element? {
        guard isCurrent(handle) else { return nil }
        let index = handle.index
        let node = nodes[index]
        if node.isQueued {
            if node.previous >= 0 { nodes[node.previous].next = node.next } else { head = node.next }
            if node.next >= 0 { nodes[node.next].previous = node.previous } else { tail = node.previous }
            count -= 1
        }
        nodes[index] = Node(element: nil, generation: 0, isQueued: false, previous: -1, next: firstFree)
        firstFree = index
        return node.element
    }

    private func isCurrent(_ handle: Handle) -> Bool {
        handle.index >= 0 && handle.index < nodes.count && nodes[handle.index].generation == handle.generation
            && handle.generation != 0
    }
}
