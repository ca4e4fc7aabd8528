import Foundation
import ResilienceCore
import ResiliencePresentation
import ResilienceTesting
import Testing

@Suite("Localization")
struct LocalizationTests {
    @Test("The English and German tables load from the bundle and have the same keys")
    func bundledTables() throws {
        let english = try PresentationStrings.load(language: "en")
        let german = try PresentationStrings.load(language: "de")
        #expect(english.count >= 50)
        #expect(Set(english.keys) == Set(german.keys))
        #expect(english["offline.title"] == "You're Offline")
        #expect(german["offline.title"] == "Keine Verbindung")
    }

    @Test("The German presenter speaks German, including relative times")
    func germanPresenter() {
        let presenter = DefaultErrorPresenter(strings: .bundled(language: "de"))
        let error = presenter.present(
            FailureClassification(category: .rateLimited, code: .rateLimited, retryAfter: .seconds(7200)),
            context: PresentationContext())
        #expect(error.title == "Anfragelimit erreicht")
        #expect(error.message == "Gerade gibt es zu viele Anfragen. Versuche es in 2 Stunden erneut.")
        #expect(error.suggestedAction == "Später erneut versuchen")
    }

    @Test("An unknown language falls back to English; a missing table is a typed error")
    func fallback() {
        #expect(PresentationStrings.bundled(language: "xx").language == "en")
        #expect(PresentationStrings.bundled(language: "xx").string("offline.title") == "You're Offline")
        #expect(throws: PresentationStrings.LoadError.missingTable(language: "xx")) {
            try PresentationStrings.load(language: "xx")
        }
    }

    @Test(
        "A regional or differently written tag of a bundled language gets that language, not English",
        arguments: ["de-DE", "de_AT", "de-Latn-CH", "DE", "de-de"])
    func regionalTag(tag: String) {
        let strings = PresentationStrings.bundled(language: tag)
        #expect(strings.language.lowercased().hasPrefix("de"), "\(tag): \(strings.language)")
        #expect(strings.string("offline.title") == "Keine Verbindung", "\(tag)")
    }

    @Test("English needs no resource bundle: a program copied without it still speaks English, never key names")
    func englishWithoutTheBundle() throws {
        let probe = try #require(BuiltExecutable.url(named: "presentation-probe"), "presentation-probe not built")
        let manager = FileManager.default
        let directory = manager.temporaryDirectory.appendingPathComponent("presentation-probe-\(UUID().uuidString)")
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? manager.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("presentation-probe")
        try manager.copyItem(at: probe, to: copy)
        let process = Process()
        process.executableURL = copy
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(
            output.contains(
                "⚠ Rate Limit Reached: Too many requests right now. Try again in 5 minutes. (Retry in 5 minutes)"),
            "\(output)")
        #expect(
            output.contains("⊘ You're Offline: Check your internet connection and try again. 3 changes will be sent"),
            "\(output)")
        #expect(!output.contains("rateLimited.") && !output.contains("offline.") && !output.contains("time."))
    }

    @Test("Integrators override single strings")
    func overrides() {
        let strings = PresentationStrings.english.overriding(["offline.title": "No Internet"])
        let error = DefaultErrorPresenter(strings: strings).present(
            FailureClassification(category: .networkUnreachable, code: .noConnection), context: PresentationContext())
        #expect(error.title == "No Internet")
        #expect(error.message == "Check your internet connection and try again.")
    }

    @Test("Placeholders: named, repeated, missing and unterminated")
    func placeholders() {
        let strings = PresentationStrings(language: "t", table: ["k": "{a}-{b}-{a}-{missing}-{open"])
        #expect(strings.string("k", ["a": "1", "b": "2"]) == "1-2-1-{missing}-{open")
        #expect(strings.string("absent") == "absent")
        #expect(strings.list(["A"]) == "A")
        #expect(PresentationStrings.english.list(["A", "B", "C"]) == "A, B and C")
    }

    @Test(
        "Relative times are deterministic and round up",
        arguments: [
            (Duration.zero, "1 second"), (.milliseconds(1500), "2 seconds"), (.seconds(59), "59 seconds"),
            (.seconds(60), "1 minute"), (.seconds(250), "5 minutes"), (.seconds(300), "5 minutes"),
            (.seconds(3600), "1 hour"), (.seconds(5400), "2 hours"), (.seconds(86_400 * 3), "3 days"),
            (.seconds(-10), "1 second"), (.milliseconds(59_500), "1 minute"), (.seconds(3599), "1 hour"),
            (.milliseconds(3_599_001), "1 hour"), (.seconds(86_399), "1 day"), (.seconds(86_401), "2 days"),
            (.seconds(Int64.max), "\(Int64.max / 86_400 + 1) days"),
        ])
    func relativeTime(duration: Duration, expected: String) {
        #expect(RelativeTimeFormatter().string(for: duration) == expected)
    }

    @Test(
        "Ages round down: data never reads older than it is",
        arguments: [
            (Duration.zero, "1 second"), (.milliseconds(1700), "1 second"), (.seconds(59), "59 seconds"),
            (.seconds(61), "1 minute"), (.seconds(119), "1 minute"), (.seconds(300), "5 minutes"),
            (.seconds(7199), "1 hour"), (.seconds(86_400 * 3 + 5), "3 days"), (.seconds(-10), "1 second"),
        ])
    func relativeAge(age: Duration, expected: String) {
        #expect(RelativeTimeFormatter().string(forAge: age) == expected)
    }

    @Test("German ages read in the nominative (\"2 Tage alt\"), waits in the dative (\"in 2 Tagen\")")
    func germanAgesAndWaits() {
        let strings = PresentationStrings.bundled(language: "de")
        let formatter = RelativeTimeFormatter(strings: strings)
        #expect(formatter.string(forAge: .seconds(2 * 86_400 + 5)) == "2 Tage")
        #expect(formatter.string(for: .seconds(2 * 86_400)) == "2 Tagen")
        #expect(formatter.string(forAge: .seconds(86_400)) == "1 Tag")
        #expect(formatter.string(forAge: .seconds(5 * 3600)) == "5 Stunden")
        let presenter = DefaultErrorPresenter(strings: strings)
        let cached = PresentationContext.SourceStatus(
            id: "lever", displayName: "Lever", failure: nil,
            classification: FailureClassification(category: .serverError, code: .serverUnavailable),
            servedFromCache: true, cacheAge: .seconds(2 * 86_400 + 5))
        #expect(
            presenter.present(PresentationContext(itemNoun: "Jobs", sources: [cached], itemsShown: 3))?.message
                == "Es werden gespeicherte Jobs von Lever (2 Tage alt) angezeigt.")
        let offline = presenter.present(
            PresentationContext(itemNoun: "Jobs", itemsShown: 3, isOffline: true, dataAge: .seconds(3 * 86_400)))
        #expect(offline?.message.hasPrefix("Es werden Jobs angezeigt, die 3 Tage alt sind.") == true)
    }

    @Test("The longest durations a Duration holds format without overflowing")
    func extremeDurations() {
        let formatter = RelativeTimeFormatter()
        let days = Int64.max / 86_400
        #expect(formatter.string(for: .seconds(Int64.max)) == "\(days + 1) days")
        #expect(formatter.string(for: .seconds(Int64.max) + .milliseconds(1)) == "\(days + 1) days")
        #expect(formatter.string(forAge: .seconds(Int64.max)) == "\(days) days")
    }

    @Test("A custom table without the age keys reads ages with the wait keys")
    func ageKeysFallBack() {
        let strings = PresentationStrings(language: "t", table: ["time.day.other": "{count} d"])
        #expect(RelativeTimeFormatter(strings: strings).string(forAge: .seconds(2 * 86_400)) == "2 d")
    }

    @Test("Decoding: UTF-16 text works, garbage is a typed error")
    func decoding() throws {
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "\"a\" = \"b\";".utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(try PresentationStrings.decode(.init(utf16), language: "t") == ["a": "b"])
        #expect(throws: PresentationStrings.LoadError.self) {
            try PresentationStrings.decode(.init([0xC3, 0x28, 0xFF]), language: "t")
        }
        #expect(throws: PresentationStrings.LoadError.self) {
            try PresentationStrings.decode(.init("\"a\" = ".utf8), language: "t")
        }
    }
}
