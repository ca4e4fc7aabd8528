/// A small validator for the Prometheus text exposition format 0.0.4: parses every line back and checks the
/// rules a scraper relies on (names, label syntax and escapes, TYPE before samples, contiguous families,
/// histogram buckets cumulative and ending in `+Inf` equal to `_count`, a `_sum` per series).
struct PrometheusValidator {
    struct Sample: Hashable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Invalid: Error, CustomStringConvertible {
        var line: Int
        var reason: String
        var description: String { "line \(line): \(reason)" }
    }

    static func validate(_ text: String) throws -> [Sample] {
        guard text.isEmpty || text.hasSuffix("\n") else { throw Invalid(line: 0, reason: "no trailing newline") }
        var types: [String: String] = [:]
        var helps: Set<String> = []
        var samples: [Sample] = []
        var finishedFamilies: Set<String> = []
        var currentFamily: String?
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let number = offset + 1
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard parts.count >= 3 else { continue }
                let name = String(parts[2])
                guard isMetricName(name) else { throw Invalid(line: number, reason: "bad name \(name)") }
                if parts[1] == "TYPE" {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3])
                    else { throw Invalid(line: number, reason: "bad TYPE") }
                    guard types[name] == nil else { throw Invalid(line: number, reason: "duplicate TYPE \(name)") }
                    guard !samples.contains(where: { Self.family(of: $0.name, types: [name: "histogram"]) == name })
                    else {
                        throw Invalid(line: number, reason: "TYPE after samples for \(name)")
                    }
                    types[name] = String(parts[3])
                } else if parts[1] == "HELP" {
                    guard helps.insert(name).inserted else { throw Invalid(line: number, reason: "duplicate HELP") }
                }
                continue
            }
            let sample = try parseSample(String(line), line: number)
            let familyName = Self.family(of: sample.name, types: types)
            if familyName != currentFamily {
                if let currentFamily { finishedFamilies.insert(currentFamily) }
                guard !finishedFamilies.contains(familyName) else {
                    throw Invalid(line: number, reason: "family \(familyName) is not contiguous")
                }
                currentFamily = familyName
            }
            if types[familyName] == "histogram" {
                guard sample.name != familyName else { throw Invalid(line: number, reason: "bare histogram sample") }
            } else if types[familyName] != nil && sample.name != familyName {
                throw Invalid(line: number, reason: "sample \(sample.name) does not match family \(familyName)")
            }
            if types[familyName] == "counter" && sample.value < 0 {
                throw Invalid(line: number, reason: "negative counter")
            }
            samples.append(sample)
        }
        for (name, type) in types where type == "histogram" { try checkHistogram(name, samples) }
        return samples
    }

    private static func family(of sampleName: String, types: [String: String]) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where sampleName.hasSuffix(suffix) {
            let base = String(sampleName.dropLast(suffix.count))
            if types[base] == "histogram" { return base }
        }
        return sampleName
    }

    private static func checkHistogram(_ name: String, _ samples: [Sample]) throws {
        var series: [[String: String]: [(Double, Double)]] = [:]
        var counts: [[String: String]: Double] = [:]
        var sums: Set<[String: String]> = []
        for sample in samples {
            var labels = sample.labels
            if sample.name == name + "_bucket" {
                guard let le = labels.removeValue(forKey: "le"), let bound = parseValue(le) else {
                    throw Invalid(line: 0, reason: "bucket without a numeric le")
                }
                series[labels, default: []].append((bound, sample.value))
            } else if sample.name == name + "_count" {
                counts[labels] = sample.value
            } else if sample.name == name + "_sum" {
                sums.insert(labels)
            }
        }
        for (labels, buckets) in series {
            guard buckets.map(\.0) == buckets.map(\.0).sorted(), buckets.last?.0 == .infinity else {
                throw Invalid(line: 0, reason: "buckets of \(labels) not ascending to +Inf")
            }
            guard buckets.map(\.1) == buckets.map(\.1).sorted() else {
                throw Invalid(line: 0, reason: "buckets of \(labels) not cumulative")
            }
            guard counts[labels] == buckets.last?.1, sums.contains(labels) else {
                throw Invalid(line: 0, reason: "+Inf bucket, _count or _sum wrong for \(labels)")
            }
        }
    }

    private static func parseSample(_ line: String, line number: Int) throws -> Sample {
        let scalars = Array(line.unicodeScalars)
        var index = 0
        var name = ""
        while index < scalars.count, scalars[index] != "{", scalars[index] != " " {
            name.unicodeScalars.append(scalars[index])
            index += 1
        }
        guard isMetricName(name) else { throw Invalid(line: number, reason: "bad metric name '\(name)'") }
        var labels: [String: String] = [:]
        if index < scalars.count, scalars[index] == "{" {
            index += 1
            while index < scalars.count, scalars[index] != "}" {
                var label = ""
                while index < scalars.count, scalars[index] != "=" {
                    label.unicodeScalars.append(scalars[index])
                    index += 1
                }
                guard isLabelName(label), index + 1 < scalars.count, scalars[index + 1] == "\"" else {
                    throw Invalid(line: number, reason: "bad label '\(label)'")
                }
                index += 2
                var value = ""
                while index < scalars.count, scalars[index] != "\"" {
                    if scalars[index] == "\\" {
                        index += 1
                        guard index < scalars.count else { break }
                        switch scalars[index] {
                        case "\\": value += "\\"
                        case "\"": value += "\""
                        case "n": value += "\n"
                        default: throw Invalid(line: number, reason: "bad escape")
                        }
                    } else {
                        value.unicodeScalars.append(scalars[index])
                    }
                    index += 1
                }
                guard index < scalars.count else { throw Invalid(line: number, reason: "unterminated label value") }
                index += 1
                guard labels.updateValue(value, forKey: label) == nil else {
                    throw Invalid(line: number, reason: "duplicate label \(label)")
                }
                if index < scalars.count, scalars[index] == "," { index += 1 }
            }
            guard index < scalars.count else { throw Invalid(line: number, reason: "unterminated labels") }
            index += 1
        }
        guard index < scalars.count, scalars[index] == " " else { throw Invalid(line: number, reason: "no value") }
        let rest = String(String.UnicodeScalarView(scalars[(index + 1)...])).split(separator: " ")
        guard (1...2).contains(rest.count), let value = parseValue(String(rest[0])) else {
            throw Invalid(line: number, reason: "bad value")
        }
        return Sample(name: name, labels: labels, value: value)
    }

    static func parseValue(_ text: String) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
    }

    private static func isMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_" || first == ":"
        else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == ":")
        }
    }

    private static func isLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
        }
    }
}
