import Foundation

/// Parses a CSV job board body (RFC 4180: quoted fields, doubled quotes, CRLF or LF) with a required header
/// naming at least `title`, `company`, `location` and `url` (any order, extra columns ignored).
public struct CSVJobBoardParser: Sendable {
    /// The largest body accepted, in bytes.
    public var maximumBytes: Int
    /// The most rows accepted.
    public var maximumRows: Int

    /// Creates a parser.
    public init(maximumBytes: Int = 2 * 1024 * 1024, maximumRows: Int = 10_000) {
        self.maximumBytes = maximumBytes
        self.maximumRows = maximumRows
    }

    static let requiredColumns = ["title", "company", "location", "url"]

    /// The jobs in `data`; throws ``CSVJobBoardError`` for anything else.
    public func parse(_ data: Data) throws -> [CSVJob] {
        if data.count > maximumBytes {
            throw CSVJobBoardError(CSVJobBoardError.tooLarge, detail: "\(data.count) bytes, limit \(maximumBytes)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CSVJobBoardError(CSVJobBoardError.malformedRow, detail: "the body is not UTF-8")
        }
        var rows = try Self.rows(in: text, maximumRows: maximumRows + 1)
        guard !rows.isEmpty else { throw CSVJobBoardError(CSVJobBoardError.missingHeader, detail: "empty body") }
        let header = rows.removeFirst().map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        var indices: [Int] = []
        for column in Self.requiredColumns {
            guard let index = header.firstIndex(of: column) else {
                throw CSVJobBoardError(CSVJobBoardError.missingColumn, detail: "no \(column) column in the header")
            }
            indices.append(index)
        }
        return try rows.enumerated().map { number, fields in
            guard fields.count == header.count else {
                throw CSVJobBoardError(
                    CSVJobBoardError.malformedRow,
                    detail: "row \(number + 2) has \(fields.count) fields, expected \(header.count)")
            }
            return CSVJob(
                title: fields[indices[0]], company: fields[indices[1]], location: fields[indices[2]],
                url: URL(string: fields[indices[3]]).flatMap { $0.scheme == nil ? nil : $0 })
        }
    }

    /// Splits `text` into rows of fields; blank lines are skipped.
    static func rows(in text: String, maximumRows: Int) throws -> [[String]] {
        var rows: [[String]] = []
        var fields: [String] = []
        var field = ""
        var inQuotes = false
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = iterator.next()
        func endRow() throws {
            fields.append(field)
            field = ""
            if !(fields.count == 1 && fields[0].isEmpty) { rows.append(fields) }
            fields = []
            if rows.count > maximumRows {
                throw CSVJobBoardError(CSVJobBoardError.tooLarge, detail: "more than \(maximumRows - 1) rows")
            }
        }
        while let scalar = pending {
            pending = iterator.next()
            if inQuotes {
                if scalar == "\"" {
                    if pending == "\"" {
                        field.unicodeScalars.append("\"")
                        pending = iterator.next()
                    } else {
                        inQuotes = false
                    }
                } else {
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"" where field.isEmpty: inQuotes = true
            case ",":
                fields.append(field)
                field = ""
            case "\r": if pending == "\n" { pending = iterator.next() }; try endRow()
            case "\n": try endRow()
            default: field.unicodeScalars.append(scalar)
            }
        }
        if inQuotes { throw CSVJobBoardError(CSVJobBoardError.malformedRow, detail: "unterminated quoted field") }
        if !field.isEmpty || !fields.isEmpty { try endRow() }
        return rows
    }
}
