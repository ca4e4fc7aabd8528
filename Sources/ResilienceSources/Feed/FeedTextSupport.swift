extension Unicode.Scalar {
    /// White space, with an ASCII fast path (the Unicode property lookup is slow on a hot path).
    var isFeedWhitespace: Bool {
        if value < 0x80 { return value == 0x20 || (0x09...0x0D).contains(value) }
        return value == 0xA0 || properties.isWhitespace
    }
}

extension String {
    /// The text without leading and trailing white space (including U+00A0); much cheaper than Foundation's
    /// `trimmingCharacters(in:)`, and no copy when there is nothing to trim.
    var trimmedFeedWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isFeedWhitespace }),
            let last = scalars.lastIndex(where: { !$0.isFeedWhitespace })
        else { return "" }
        let end = scalars.index(after: last)
        if first == startIndex, end == endIndex { return self }
        return String(self[first..<end])
    }
}
