/// What a Unicode scalar shows as in text kept on one line (a banner, a status table's cell, technical
/// details): a line break or control character (C0, C1, U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR)
/// reads as a space, and a bidirectional control (U+202E RIGHT-TO-LEFT OVERRIDE and its kin) is dropped, since
/// it reorders what follows on the line: a source named `acme\u{202E}lanretni` would show as `acmeinternal`.
enum OneLineScalar {
    /// The scalar to show for `scalar`, or `nil` to drop it.
    static func shown(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
        if scalar.properties.isBidiControl { return nil }
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return " "
        default: return scalar
        }
    }
}
