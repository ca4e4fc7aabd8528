/// The action a ``DefaultErrorPresenter`` suggests when trying again may help: the words for how the person asks
/// for fresh data where the message is shown ("Pull to refresh" in an iPhone list, "Reload the page" on a web
/// page), read from the strings table under ``key``.
///
/// ```swift
/// let presenter = DefaultErrorPresenter(refreshAction: .reloadPage)  // a server rendering a web page
/// ```
public struct RefreshAction: Hashable, Sendable {
    /// The strings table key of the action's words.
    public let key: String

    /// An action worded by the strings table's entry `key` (give the entry in every language your table has).
    ///
    /// - Parameter key: The strings table key of the action's words.
    public init(key: String) {
        self.key = key
    }

    /// "Pull to refresh": a list the person can pull down (iOS, iPadOS, visionOS).
    public static let pullToRefresh = RefreshAction(key: "action.pullToRefresh")
    /// "Refresh": an app with a refresh command or button (macOS, a terminal, a desktop app).
    public static let refresh = RefreshAction(key: "action.refresh")
    /// "Reload the page": a web page the server renders.
    public static let reloadPage = RefreshAction(key: "action.reloadPage")

    /// The action where the code runs: ``pullToRefresh`` on iOS, iPadOS and visionOS (not a Mac Catalyst app),
    /// ``refresh`` everywhere else (macOS, Linux, Windows, watchOS, tvOS).
    public static var platformDefault: RefreshAction {
        #if (os(iOS) && !targetEnvironment(macCatalyst)) || os(visionOS)
        .pullToRefresh
        #else
        .refresh
        #endif
    }
}
