extension FeedCollector {
    /// The fields captured for one item (or for the feed), each kept from its first occurrence.
    ///
    /// Speed: a fixed array indexed by the field's number instead of a `[Field: Captured]` dictionary; it is
    /// read several times per element and per item, and hashing was a visible share of a parse.
    struct FieldTable {
        private var slots = [Captured?](repeating: nil, count: Field.count)

        subscript(field: Field) -> Captured? {
            get { slots[field.rawValue] }
            set { slots[field.rawValue] = newValue }
        }
    }
}
