/// A complete mutation store: the durable queue (``MutationQueue``), its failed list (``FailedMutationList``)
/// and its metadata table (``MutationMetadataStore``), as the SQLite and in-memory stores provide them.
///
/// Each part is a small protocol of its own, with its own contract and conformance kit; code that needs only
/// one part asks for that part (a sync engine needs the queue and the metadata table, a review screen the
/// failed list).
public typealias MutationStore = MutationQueue & FailedMutationList & MutationMetadataStore
