import Foundation
import ResilienceCore

extension SQLiteMutationStore {
    /// How an ``SQLiteMutationStore`` opens and guards its database.
    public struct Configuration: Sendable {
        /// How long a statement waits for another connection's lock before throwing `DB_006` (busy), in whole
        /// milliseconds clamped to `0...Int32.max` (about 24.8 days, SQLite's limit); zero or less waits not at all.
        public var busyTimeout: Duration = .seconds(5)
        /// Whether enqueuing a delete drops the entity's pending updates (they would be overwritten anyway).
        public var coalescesUpdatesBeforeDelete = false
        /// Whether a corrupted file, once quarantined, is replaced by a fresh empty store. When `false` (the
        /// default) opening throws `DB_004`, and so does every later open at the path, until one with `true`
        /// accepts what is at the path then (a fresh store, or a file the app put back) and reports the
        /// quarantine in ``SQLiteMutationStore/recovery``. The bad file is quarantined either way; when `true` and
        /// the fresh store then fails to open (a full disk, say), the next open still reports the quarantine.
        public var recreatesCorruptedStore = false
        /// Whether opening runs `PRAGMA quick_check` to catch corruption early (cost grows with the file).
        public var verifiesIntegrityOnOpen = true
        /// A cap on the database size in pages (`PRAGMA max_page_count`); writes past it throw `DB_005`.
        public var maximumPageCount: Int?
        /// The largest payload accepted, in bytes.
        public var maximumPayloadBytes = MutationDraft.defaultMaximumPayloadBytes
        /// The most keys the metadata table holds (at least 1; less counts as 1): a value under a new key when it is
        /// full throws `DB_003`, while stored keys still take new values and can be deleted. Default:
        /// ``MutationMetadataLimits/defaultMaximumKeyCount`` (256; its documentation gives the reasons). A table
        /// that already holds more (a file written with a larger setting) keeps them, and takes no new key until
        /// deletions bring it under the limit.
        public var maximumMetadataKeyCount = MutationMetadataLimits.defaultMaximumKeyCount
        /// The wall-clock source for ``Mutation/createdAt`` and quarantine names. Defaults to `Date()`, the one
        /// documented place the store reads the wall clock.
        public var currentDate: @Sendable () -> Date = { Date() }

        /// Creates a configuration with the defaults.
        public init() {}

        /// The defaults: 5 s busy timeout, no coalescing, integrity check on open, corrupted files reported, 256
        /// metadata keys.
        public static var standard: Configuration { Configuration() }

        /// The defaults plus coalescing of updates before deletes.
        public static var coalescing: Configuration {
            var configuration = Configuration()
            configuration.coalescesUpdatesBeforeDelete = true
            return configuration
        }
    }

    /// What opening the store did about a corrupted file.
    public struct CorruptionRecovery: Hashable, Sendable {
        /// Where the corrupted file was moved (its `-wal` companion, if any, sits beside it).
        public var quarantinedPath: String
        /// SQLite's description of the damage.
        public var reason: String
    }
}
