import Foundation
import ResilienceCore

// Byte ranges as RFC 9110 §14 defines them, for a cache that answers range requests from what it stores and
// stores partial (206) content (RFC 9111 §3.3–3.4). Only single byte ranges are answered from storage; any
// other `Range` (several ranges, another unit, a syntax error) is left to the origin.

/// What a request's `Range` field asks for.
enum HTTPRangeRequest: Hashable {
    /// No `Range` field.
    case none
    /// One byte range (RFC 9110 §14.1.2).
    case single(HTTPByteRangeSpec)
    /// A `Range` this cache does not answer from storage: several ranges, another unit, or invalid syntax.
    case unanswerable

    /// The range `request` asks for. Only `GET` has range semantics (RFC 9110 §14.2).
    init(_ request: HTTPRequest) {
        let values = request.method == .get ? request.headers.values(for: "Range") : []
        guard !values.isEmpty else {
            self = .none
            return
        }
        guard values.count == 1, let spec = HTTPByteRangeSpec(rangeField: values[0]) else {
            self = .unanswerable
            return
        }
        self = .single(spec)
    }
}

/// One `byte-range-spec` or `suffix-range` of RFC 9110 §14.1.2.
enum HTTPByteRangeSpec: Hashable {
    /// `first-last` or `first-` (`last` nil): bytes from `first` to `last` inclusive.
    case span(first: Int, last: Int?)
    /// `-length`: the last `length` bytes.
    case suffix(length: Int)

    /// The most digits a position may have (larger values cannot address a stored body).
    private static let maximumDigits = 18

    /// Parses a `Range` field value holding exactly one byte range (`bytes=0-499`, `bytes=500-`, `bytes=-5`);
    /// nil for anything else.
    init?(rangeField value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard let equals = trimmed.firstIndex(of: "="),
            trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "bytes"
        else { return nil }
        let set = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !set.contains(","), let dash = set.firstIndex(of: "-") else { return nil }
        let firstText = set[..<dash]
        let lastText = set[set.index(after: dash)...]
        if firstText.isEmpty {
            guard let length = Self.position(lastText) else { return nil }
            self = .suffix(length: length)
            return
        }
        guard let first = Self.position(firstText) else { return nil }
        if lastText.isEmpty {
            self = .span(first: first, last: nil)
            return
        }
        guard let last = Self.position(lastText), last >= first else { return nil }
        self = .span(first: first, last: last)
    }

    /// A run of 1–18 ASCII digits as a number.
    static func position(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= maximumDigits,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int(text)
    }

    /// The bytes this spec selects from a representation of `completeLength` bytes, or nil when it is not
    /// satisfiable (RFC 9110 §14.1.2: a first position past the end, a zero suffix, an empty representation).
    func resolved(completeLength: Int) -> ClosedRange<Int>? {
        guard completeLength > 0 else { return nil }
        switch self {
        case .span(let first, let last):
            guard first < completeLength else { return nil }
            return first...min(last ?? completeLength - 1, completeLength - 1)
        case .suffix(let length):
            guard length > 0 else { return nil }
            return max(0, completeLength - length)...(completeLength - 1)
        }
    }

    /// The `Range` field value for this spec.
    var fieldValue: String {
        switch self {
        case .span(let first, let last): return "bytes=\(first)-" + (last.map(String.init) ?? "")
        case .suffix(let length): return "bytes=-\(length)"
        }
    }
}

/// A `Content-Range` field of a single-part 206 response (RFC 9110 §14.4): which bytes the body holds, and of
/// how many (nil when the sender wrote `*`).
struct HTTPContentRange: Hashable {
    /// The positions of the first and last byte the body holds.
    var range: ClosedRange<Int>
    /// The length of the whole representation, when known.
    var completeLength: Int?

    init(range: ClosedRange<Int>, completeLength: Int?) {
        self.range = range
        self.completeLength = completeLength
    }

    /// Parses `bytes first-last/length` or `bytes first-last/*`; nil for anything else, including the
    /// unsatisfied form `bytes */length` and a range that does not fit in its complete length.
    init?(fieldValue value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "bytes" else { return nil }
        let rest = trimmed[trimmed.index(after: space)...].trimmingCharacters(in: .whitespaces)
        guard let slash = rest.firstIndex(of: "/"), let dash = rest[..<slash].firstIndex(of: "-"),
            let first = HTTPByteRangeSpec.position(rest[..<dash]),
            let last = HTTPByteRangeSpec.position(rest[rest.index(after: dash)..<slash]), first <= last
        else { return nil }
        let lengthText = rest[rest.index(after: slash)...]
        var completeLength: Int?
        if lengthText != "*" {
            guard let length = HTTPByteRangeSpec.position(lengthText), last < length else { return nil }
            completeLength = length
        }
        self.init(range: first...last, completeLength: completeLength)
    }

    /// The content range of `response` when it is a single-part 206 whose body is exactly the range it
    /// names; nil otherwise (a multipart/byteranges body, a missing or invalid field, a body of another
    /// length).
    init?(of response: HTTPResponse) {
        guard response.status == 206, response.headers.values(for: "Content-Range").count == 1,
            let field = response.headers["Content-Range"], let parsed = HTTPContentRange(fieldValue: field),
            parsed.range.count == response.body.count
        else { return nil }
        self = parsed
    }

    /// `bytes first-last/length`, or `…/*` when the complete length is unknown.
    var fieldValue: String {
        "bytes \(range.lowerBound)-\(range.upperBound)/" + (completeLength.map(String.init) ?? "*")
    }

    /// The bytes `spec` selects when this stored range holds all of them.
    func covering(_ spec: HTTPByteRangeSpec) -> ClosedRange<Int>? {
        let requested: ClosedRange<Int>?
        if let completeLength {
            requested = spec.resolved(completeLength: completeLength)
        } else if case .span(let first, let last?) = spec {
            requested = first...last  // without a complete length only a closed span can be placed
        } else {
            requested = nil
        }
        guard let requested, range.contains(requested.lowerBound), range.contains(requested.upperBound) else {
            return nil
        }
        return requested
    }
}

/// The strong entity tag of `headers` (RFC 9110 §8.8.3), or nil when there is none or it is weak: only a
/// strong validator allows combining partial responses or honouring `If-Range` (RFC 9110 §13.1.5).
func strongEntityTag(of headers: HTTPHeaders) -> String? {
    guard let tag = headers["ETag"]?.trimmingCharacters(in: .whitespaces), tag.hasPrefix("\""), tag.count >= 2,
        tag.hasSuffix("\"")
    else { return nil }
    return tag
}
