import ResilienceCore

/// The standard ``ErrorPresenter``: turns a classification and a ``PresentationContext`` into an honest,
/// actionable ``UserFacingError`` from a localizable strings table.
///
/// Decision order:
/// 0. The device is offline now (``PresentationContext/isOffline``, from a ``ConnectivityMonitor``): the message is
///    that, whatever failed, for a single operation as for a multi-source fetch.
/// 1. A multi-source fetch where some sources succeeded and their items are shown
///    (``PresentationContext/isPartial``; never a fetch that missed its policy): one source down because its
///    breaker is open ("Lever is temporarily unavailable. Showing jobs from other sources."), otherwise
///    "Showing jobs from 4 of 6 sources. Unavailable right now: Lever and RSS." (severity info). Sources
///    served from a cache are named as such, with their age ("Saved: Workable (2 minutes old).") and never
///    give the message its category, code or countdown (see ``headline(of:)``).
/// 2. Offline, rate limiting, credentials, insecure transport and storage are reported as such even when
///    several sources failed: they are what the person can act on. A network-unreachable failure while a
///    monitor says the device is online (``PresentationContext/isOnline``) is "Server Unreachable", not offline,
///    unless the system said the device itself had no connection then (`NET_001`, the path came back since).
/// 3. Several sources and none succeeded: "Couldn't load jobs from any source. Please try again in a few minutes.",
///    with no such promise and no Retry when every one of them is gone or rejected (not found, client error).
/// 4. Otherwise, by category (and code for authentication, storage and TLS: a certificate or handshake
///    failure, `NET_005`, gets its own message and no retry action, because retrying cannot fix it).
///
/// Raw error text never reaches `title` or `message`; codes, statuses and the failure message go to
/// `technicalDetails`, redacted, on one line (control characters read as spaces, invisible format characters
/// such as bidirectional overrides are dropped) and cut at 1,000 Unicode scalars (each combining mark counts) with
/// "…": the message may be a server's or an error's own text, of any length.
public struct DefaultErrorPresenter: ErrorPresenter {
    /// The message table.
    public var strings: PresentationStrings
    /// Formats "Try again in 5 minutes".
    public var timeFormatter: RelativeTimeFormatter
    /// Applied to technical details.
    public var redactor: Redactor
    /// The action suggested when trying again may help ("Pull to refresh", "Refresh", "Reload the page").
    public var refreshAction: RefreshAction

    /// Creates a presenter reading `strings` (English by default).
    ///
    /// - Parameters:
    ///   - strings: The message table. Default: `.english`.
    ///   - redactor: Applied to technical details. Default: `.standard`.
    ///   - refreshAction: The action suggested when trying again may help. Default:
    ///     ``RefreshAction/platformDefault`` ("Pull to refresh" on iOS, iPadOS and visionOS, "Refresh" elsewhere).
    public init(
        strings: PresentationStrings = .english, redactor: Redactor = .standard,
        refreshAction: RefreshAction = .platformDefault
    ) {
        self.strings = strings
        self.timeFormatter = RelativeTimeFormatter(strings: strings)
        self.redactor = redactor
        self.refreshAction = refreshAction
    }

    /// The message for `failure` in `context`.
    public func present(_ failure: FailureClassification, context: PresentationContext) -> UserFacingError {
        if context.isOffline { return offline(failure, context) }
        if context.sources.count > 1 && context.isPartial && context.sourcesSucceeded > 0 {
            return partial(failure, context: context)
        }
        if context.sources.count > 1 && context.sourcesSucceeded == 0
            && !Self.actionableCategories.contains(failure.category) && !Self.actionableCodes.contains(failure.code)
        {
            let failures = context.unavailableSources.compactMap(\.failure)
            if !failures.isEmpty && failures.allSatisfy({ Self.permanentCategories.contains($0.category) }) {
                return make(
                    "allUnavailable", failure, context: context, severity: .error, recoverable: false, action: nil,
                    retry: false, messageKey: "allUnavailable.message.permanent", arguments: ["noun": context.itemNoun])
            }
            return make(
                "allUnavailable", failure, context: context, severity: .error, recoverable: true,
                action: refreshAction.key, retry: true, arguments: ["noun": context.itemNoun])
        }
        return single(failure, context: context)
    }

    /// Categories of a failure that trying again cannot mend (the resource is gone, the request is rejected): when
    /// every source failed with one, "Couldn't load jobs from any source" promises nothing and offers no Retry.
    static let permanentCategories: Set<FailureCategory> = [.notFound, .clientError]

    /// Categories reported as themselves even when several sources failed.
    static let actionableCategories: Set<FailureCategory> = [
        .networkUnreachable, .rateLimited, .throttled, .authentication, .insecureTransport, .storage,
    ]

    /// Codes reported as themselves even when several sources failed.
    static let actionableCodes: Set<FailureCode> = [.certificateInvalid]

    private func partial(_ failure: FailureClassification, context: PresentationContext) -> UserFacingError {
        let unavailable = context.unavailableSources
        let cached = cachedNote(context, key: "someUnavailable.cached").map { " " + $0 } ?? ""
        if unavailable.count == 1, let only = unavailable.first, only.failure?.category == .circuitOpen {
            var error = make(
                "sourceUnavailable", failure, context: context, severity: .info, recoverable: true, action: nil,
                retry: false, messageKey: "sourceUnavailable.message.partial",
                arguments: ["source": only.displayName, "noun": context.itemNoun])
            error.message += cached
            return error
        }
        var message = strings.string(
            "someUnavailable.message",
            [
                "noun": context.itemNoun, "succeeded": String(context.sourcesSucceeded),
                "total": String(context.sourcesAttempted),
            ])
        if !unavailable.isEmpty {
            message +=
                " "
                + strings.string("someUnavailable.missing", ["names": strings.list(unavailable.map(\.displayName))])
        }
        return UserFacingError(
            title: strings.string("someUnavailable.title"), message: message + cached, severity: .info,
            isRecoverable: true, suggestedAction: nil, showsRetry: false, retryAfter: failure.retryAfter,
            technicalDetails: details(failure, context: context), code: failure.code)
    }

    private func single(_ failure: FailureClassification, context: PresentationContext) -> UserFacingError {
        switch failure.category {
        case .networkUnreachable where context.isOnline && failure.code != .noConnection:
            return make("unreachable", failure, context: context, action: refreshAction.key, retry: true)
        case .networkUnreachable:
            return offline(failure, context)
        case .timeout:
            return make("timeout", failure, context: context, action: refreshAction.key, retry: true)
        case .rateLimited, .throttled:
            let (key, arguments) = waitMessage("rateLimited", failure.retryAfter)
            return make(
                "rateLimited", failure, context: context, severity: .warning, action: "action.tryAgainLater",
                retry: true, messageKey: key, arguments: arguments)
        case .authentication:
            if failure.code == .forbidden {
                return make("forbidden", failure, context: context, recoverable: false, action: nil, retry: false)
            }
            return make("sessionExpired", failure, context: context, action: "action.signIn", retry: false)
        case .notFound:
            return make("notFound", failure, context: context, recoverable: false, action: nil, retry: false)
        case .clientError:
            return make("invalidInput", failure, context: context, action: "action.checkInput", retry: false)
        case .serverError, .transient:
            return make("serverError", failure, context: context, action: refreshAction.key, retry: true)
        case .circuitOpen:
            let unavailable = context.unavailableSources
            let name =
                (unavailable.first { $0.failure?.category == .circuitOpen } ?? unavailable.first)?.displayName
                ?? context.sources.first?.displayName ?? strings.string("sourceUnavailable.defaultName")
            var (key, arguments) = waitMessage("sourceUnavailable", failure.retryAfter)
            arguments["source"] = name
            return make(
                "sourceUnavailable", failure, context: context, severity: .warning, action: "action.tryAgainLater",
                retry: failure.retryAfter != nil, messageKey: key, arguments: arguments)
        case .insecureTransport:
            return make("insecure", failure, context: context, recoverable: false, action: nil, retry: false)
        case .storage:
            switch failure.code {
            case .diskFull:
                return make("storageFull", failure, context: context, action: "action.freeSpace", retry: true)
            case .corruptedData:
                return make("dataCorrupted", failure, context: context, action: refreshAction.key, retry: true)
            default:
                return make("storage", failure, context: context, action: nil, retry: true)
            }
        case .invalidResponse where failure.code == .certificateInvalid:
            return make("security", failure, context: context, recoverable: false, action: nil, retry: false)
        case .invalidResponse:
            return make("unreadable", failure, context: context, action: "action.tryAgainLater", retry: true)
        case .conflict:
            return make("conflict", failure, context: context, severity: .info, action: nil, retry: false)
        case .cancelled:
            return make("cancelled", failure, context: context, severity: .info, action: nil, retry: true)
        default:
            return make("unknown", failure, context: context, action: refreshAction.key, retry: true)
        }
    }

    private func waitMessage(_ prefix: String, _ wait: Duration?) -> (String, [String: String]) {
        guard let wait, wait > .zero else { return ("\(prefix).message.later", [:]) }
        return ("\(prefix).message.in", ["time": timeFormatter.string(for: wait)])
    }

    private func make(
        _ prefix: String, _ failure: FailureClassification, context: PresentationContext,
        severity: UserFacingError.Severity = .error, recoverable: Bool = true, action: String?, retry: Bool,
        messageKey: String? = nil, arguments: [String: String] = [:]
    ) -> UserFacingError {
        UserFacingError(
            title: strings.string("\(prefix).title"),
            message: strings.string(messageKey ?? "\(prefix).message", arguments),
            severity: severity, isRecoverable: recoverable, suggestedAction: action.map { strings.string($0) },
            // A countdown to a Retry that is not offered would promise that waiting helps (a 404's or a 401's
            // `Retry-After`); the hint stays in the technical details.
            showsRetry: retry, retryAfter: retry ? failure.retryAfter : nil,
            technicalDetails: details(failure, context: context), code: failure.code)
    }

    /// `NET_004 rate-limited HTTP 429 retry-after 300s: <redacted message>; sources: lever=RES_001`.
    func details(_ failure: FailureClassification, context: PresentationContext) -> String {
        var text = "\(failure.code) \(failure.category)"
        if let status = failure.httpStatus { text += " HTTP \(status)" }
        if let retryAfter = failure.retryAfter { text += " retry-after \(retryAfter.components.seconds)s" }
        if let message = failure.message { text += ": " + Self.oneLine(redactor.redact(message)) }
        let failed = context.sources.compactMap { source in source.failure.map { "\(source.id)=\($0.code)" } }
        if !failed.isEmpty { text += "; sources: " + failed.joined(separator: ", ") }
        return text
    }

    /// The longest failure message `technicalDetails` carries, in Unicode scalars.
    static let maximumDetailsMessageLength = 1_000

    /// `text` on one line and at most `maximumDetailsMessageLength` Unicode scalars (then ending in "…"): control
    /// characters and line breaks (terminal escapes, U+2028) become spaces, format characters (bidirectional
    /// overrides, zero-width ones) are dropped. Counted in scalars, not characters, so combining marks stacked on
    /// one character cannot carry it past the bound. Redact before, so a secret is never cut in two and missed.
    static func oneLine(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        var kept = 0
        var cut = false
        for scalar in text.unicodeScalars {
            guard scalar.properties.generalCategory != .format, let shown = OneLineScalar.shown(scalar) else {
                continue
            }
            guard kept < maximumDetailsMessageLength else {
                cut = true
                break
            }
            scalars.append(shown)
            kept += 1
        }
        return String(scalars) + (cut ? "…" : "")
    }
}
