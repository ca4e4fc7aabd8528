extension PresentationStrings {
    /// The English table, in `.strings` syntax: the source language of the messages, compiled into the module so
    /// that English never depends on the resource bundle being shipped beside the program (a binary copied alone
    /// into a container image has none) and a person never reads key names such as `offline.title`. Every other
    /// language is `Resources/<lang>.lproj/Localizable.strings`, with the same keys.
    static let englishTableSource = #"""
        /* ResiliencePresentation: English messages. Placeholders are named: {time}, {source}, {noun}, {succeeded},
           {total}, {names}, {count}. Override any key with PresentationStrings.overriding(_:). */

        "offline.title" = "You're Offline";
        "offline.message" = "Check your internet connection and try again.";
        "offline.message.data" = "Showing {noun} from {age} ago. They'll refresh when you're back online.";
        "offline.queued.one" = "1 change will be sent when you're back online.";
        "offline.queued.other" = "{count} changes will be sent when you're back online.";
        "unreachable.title" = "Server Unreachable";
        "unreachable.message" = "The server couldn't be reached, although your device is online. Please try again in a few minutes.";
        "timeout.title" = "Request Timed Out";
        "timeout.message" = "The server took too long to respond. Please try again.";
        "rateLimited.title" = "Rate Limit Reached";
        "rateLimited.message.in" = "Too many requests right now. Try again in {time}.";
        "rateLimited.message.later" = "Too many requests right now. Please try again in a few minutes.";
        "sessionExpired.title" = "Session Expired";
        "sessionExpired.message" = "Your session has expired. Please sign in again to continue.";
        "forbidden.title" = "Access Denied";
        "forbidden.message" = "Your account doesn't have permission to view this.";
        "notFound.title" = "Not Found";
        "notFound.message" = "What you're looking for isn't available anymore.";
        "invalidInput.title" = "Invalid Input";
        "invalidInput.message" = "Some of the information you entered isn't valid. Please check it and try again.";
        "serverError.title" = "Server Error";
        "serverError.message" = "The server ran into a problem. Please try again in a few minutes.";
        "sourceUnavailable.title" = "Source Temporarily Unavailable";
        "sourceUnavailable.message.partial" = "{source} is temporarily unavailable. Showing {noun} from other sources.";
        "sourceUnavailable.message.in" = "{source} is temporarily unavailable. Try again in {time}.";
        "sourceUnavailable.message.later" = "{source} is temporarily unavailable. Please try again in a few minutes.";
        "sourceUnavailable.defaultName" = "This service";
        "someUnavailable.title" = "Some Sources Unavailable";
        "someUnavailable.message" = "Showing {noun} from {succeeded} of {total} sources.";
        "someUnavailable.missing" = "Unavailable right now: {names}.";
        "allUnavailable.title" = "Sources Unavailable";
        "allUnavailable.message" = "Couldn't load {noun} from any source. Please try again in a few minutes.";
        "allUnavailable.message.permanent" = "Couldn't load {noun} from any source.";
        "cached.title" = "Showing Saved Results";
        "cached.message" = "Showing saved {noun} from {names}.";
        "cached.entry" = "{source} ({age} old)";
        "someUnavailable.cached" = "Saved: {names}.";
        "insecure.title" = "Insecure Connection Blocked";
        "insecure.message" = "This connection was blocked because it isn't secure. No data was sent.";
        "security.title" = "Secure Connection Failed";
        "security.message" = "We couldn't set up a secure connection to this server (its certificate or encryption could not be verified), so no data was exchanged. Trying again won't help until the server's security settings are fixed.";
        "storageFull.title" = "Storage Full";
        "storageFull.message" = "Your device is out of storage. Free up some space and try again.";
        "dataCorrupted.title" = "Data Corrupted";
        "dataCorrupted.message" = "Some saved data was damaged and couldn't be read. Refreshing will download it again.";
        "storage.title" = "Storage Problem";
        "storage.message" = "Your data couldn't be saved on this device. Please try again.";
        "unreadable.title" = "Unreadable Response";
        "unreadable.message" = "We received a response we couldn't read. Please try again later.";
        "conflict.title" = "Already Saved";
        "conflict.message" = "This change was already saved.";
        "cancelled.title" = "Cancelled";
        "cancelled.message" = "The request was cancelled.";
        "unknown.title" = "Something Went Wrong";
        "unknown.message" = "Please try again.";

        "action.pullToRefresh" = "Pull to refresh";
        "action.refresh" = "Refresh";
        "action.reloadPage" = "Reload the page";
        "action.tryAgainLater" = "Try again later";
        "action.signIn" = "Sign in";
        "action.checkInput" = "Check your input";
        "action.freeSpace" = "Free up space";
        "action.retry" = "Retry";
        "action.dismiss" = "Dismiss";
        "banner.retryIn" = "Retry in {time}";

        "time.second.one" = "1 second";
        "time.second.other" = "{count} seconds";
        "time.minute.one" = "1 minute";
        "time.minute.other" = "{count} minutes";
        "time.hour.one" = "1 hour";
        "time.hour.other" = "{count} hours";
        "time.day.one" = "1 day";
        "time.day.other" = "{count} days";

        /* Ages ("{age} old", "{age} alt"): the form an age takes, which may differ from a wait's ("in 2 Tagen"). */
        "age.second.one" = "1 second";
        "age.second.other" = "{count} seconds";
        "age.minute.one" = "1 minute";
        "age.minute.other" = "{count} minutes";
        "age.hour.one" = "1 hour";
        "age.hour.other" = "{count} hours";
        "age.day.one" = "1 day";
        "age.day.other" = "{count} days";

        "list.separator" = ", ";
        "list.lastSeparator" = " and ";
        """#
}
