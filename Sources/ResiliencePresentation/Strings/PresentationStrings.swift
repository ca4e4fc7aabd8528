import Foundation

/// The message table a presenter and renderers read: bundled `.strings` per language, with English
/// underneath for missing keys, and integrator overrides on top. English is compiled in, so a program run
/// without the module's resource bundle still speaks English, never key names.
///
/// Values use named placeholders (`"Try again in {time}."`), filled by ``string(_:_:)`` without any
/// locale-dependent formatting, so output is deterministic. Tables are loaded from the module's resources by
/// parsing the `.strings` file with ``StringsFileParser`` (binary property lists, as Xcode may produce, are
/// read with `PropertyListSerialization`), which works the same on Linux and Apple platforms.
///
/// ```swift
/// let strings = PresentationStrings.bundled(language: "de")
///     .overriding(["offline.title": "Keine Internetverbindung"])
/// let presenter = DefaultErrorPresenter(strings: strings)
/// ```
public struct PresentationStrings: Sendable, Hashable {
    /// Why a bundled table could not be loaded.
    public enum LoadError: Error, Hashable, Sendable {
        /// The bundle has no table for the language.
        case missingTable(language: String)
        /// The file is neither UTF-8/UTF-16 text nor a property list.
        case unreadable(language: String)
        /// The text is not valid `.strings` syntax.
        case malformed(language: String, StringsFileParser.ParseError)
    }

    /// The language the table is for (`"en"`, `"de"`).
    public let language: String
    /// Key → value, after fallbacks and overrides.
    public private(set) var table: [String: String]

    /// Creates strings from an explicit table (for tests and fully custom tables).
    ///
    /// - Parameters:
    ///   - language: The language the table is for (`"en"`, `"de"`).
    ///   - table: Key → value, after fallbacks and overrides.
    public init(language: String, table: [String: String]) {
        self.language = language
        self.table = table
    }

    /// The bundled English strings.
    public static let english = bundled(language: "en")

    /// The bundled table for `language`, with English filling any missing keys; English alone when the
    /// language is not bundled.
    ///
    /// A tag with a region or script (`"de-DE"`, `"de_AT"`, `"de-Latn-CH"`, as `Locale.preferredLanguages`
    /// gives) gets the table of its language (`"de"`) when no table has the exact tag; the language code is
    /// matched in any case (`"DE"`).
    public static func bundled(language: String) -> PresentationStrings {
        let english = (try? load(language: "en")) ?? [:]
        let base = language.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
        for candidate in [language, base] where !candidate.isEmpty && candidate != "en" {
            if let localized = try? load(language: candidate) {
                return PresentationStrings(language: candidate, table: english.merging(localized) { _, new in new })
            }
        }
        return PresentationStrings(language: "en", table: english)
    }

    /// The languages bundled with the module.
    public static let bundledLanguages = ["de", "en"]

    /// The raw table bundled for `language`. English is compiled into the module and needs no resource bundle;
    /// other languages are read from the module's resources.
    public static func load(language: String) throws(LoadError) -> [String: String] {
        if language == "en" {
            do {
                return try StringsFileParser.parse(englishTableSource)
            } catch {
                throw .malformed(language: language, error)
            }
        }
        guard let url = tableURL(language: language), let data = try? Data(contentsOf: url) else {
            throw .missingTable(language: language)
        }
        return try decode(data, language: language)
    }

    /// Decodes `.strings` data: UTF-8 or UTF-16 text, or a binary property list.
    public static func decode(_ data: Data, language: String) throws(LoadError) -> [String: String] {
        if data.starts(with: Array("bplist".utf8)) {
            let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            guard let table = plist as? [String: String] else { throw .unreadable(language: language) }
            return table
        }
        let text: String?
        if data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF]) {
            text = String(data: data, encoding: .utf16)
        } else {
            text = String(data: data, encoding: .utf8)
        }
        guard let text else { throw .unreadable(language: language) }
        do {
            return try StringsFileParser.parse(text)
        } catch {
            throw .malformed(language: language, error)
        }
    }

    private static func tableURL(language: String) -> URL? {
        guard let bundle = PresentationResources.bundle else { return nil }
        if let url = bundle.url(
            forResource: "Localizable", withExtension: "strings", subdirectory: nil, localization: language)
        {
            return url
        }
        let candidate = bundle.bundleURL.appendingPathComponent("\(language).lproj/Localizable.strings")
        return FileManager.default.fileExists(atPath: candidate.path) ? candidate : nil
    }

    /// These strings with `overrides` replacing (or adding) keys.
    public func overriding(_ overrides: [String: String]) -> PresentationStrings {
        PresentationStrings(language: language, table: table.merging(overrides) { _, new in new })
    }

    /// The value for `key` with `{name}` placeholders replaced from `arguments`; the key itself when missing.
    public func string(_ key: String, _ arguments: [String: String] = [:]) -> String {
        let template = table[key] ?? key
        guard !arguments.isEmpty, template.contains("{") else { return template }
        var result = ""
        var remainder = Substring(template)
        while let open = remainder.firstIndex(of: "{") {
            result += remainder[..<open]
            let afterOpen = remainder.index(after: open)
            guard let close = remainder[afterOpen...].firstIndex(of: "}") else {
                remainder = remainder[open...]
                break
            }
            let name = String(remainder[afterOpen..<close])
            result += arguments[name] ?? "{\(name)}"
            remainder = remainder[remainder.index(after: close)...]
        }
        return result + remainder
    }

    /// `items` joined as a list: `"A"`, `"A and B"`, `"A, B and C"` (separators from the table).
    public func list(_ items: [String]) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        let separator = string("list.separator")
        let last = string("list.lastSeparator")
        return items.dropLast().joined(separator: separator) + last + items[items.count - 1]
    }
}
