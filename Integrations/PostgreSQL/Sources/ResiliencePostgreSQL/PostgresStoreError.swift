import PostgresNIO
import ResilienceCore

/// Why the PostgreSQL coordination store could not work, classified from the server's SQLSTATE code (never from
/// the wording of its message).
///
/// A *configuration* error (``isConfigurationError``: a missing or outdated schema, a role without the
/// privileges) will not go away by waiting: the store reports it from ``PostgresCoordinationStore/run()``,
/// which throws it and so ends the service group, instead of letting the shared policies fail open for ever.
/// Each store call that meets it throws ``CoordinationStoreError/protocolViolation(_:)`` carrying this error's
/// description. Other failures (the server unreachable, contention that outlasted the retries) are transient:
/// calls throw ``CoordinationStoreError/unavailable(_:)`` and the policies follow their failure mode. A
/// read-only server (``Code/readOnly``) is transient too: a failover fences the old primary and promotes a standby.
public struct PostgresStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, open-ended: new codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let name: String

        private init(_ name: String) { self.name = name }

        /// The role lacks a privilege on the store's tables or sequence (SQLSTATE 42501).
        public static let insufficientPrivilege = Code("insufficient-privilege")
        /// A table, sequence, column or function of the schema is missing (42P01, 42P02, 3F000, 42703, 42883),
        /// or the schema is older than this program: apply `Schema/*.sql` or enable run-time DDL.
        public static let schemaMissing = Code("schema-missing")
        /// The database holds a newer schema version than this program knows.
        public static let schemaTooNew = Code("schema-too-new")
        /// The server accepts no writes (25006: a hot standby, or `default_transaction_read_only`). Transient: a
        /// failover in progress ends it; a store pointed at a standby for good keeps reporting it in
        /// ``PostgresCoordinationStore/lastError``. The connection that answered it is closed, so the next call
        /// connects again, through the address a failover moved to the new primary.
        public static let readOnly = Code("read-only")
        /// Concurrent writers kept failing to serialize (40001, 40P01) after every retry; happens only when the
        /// role's transactions default to `REPEATABLE READ` or `SERIALIZABLE`.
        public static let serializationFailure = Code("serialization-failure")
        /// The server could not be reached, or the call missed its deadline.
        public static let unavailable = Code("unavailable")
        /// Any other server error.
        public static let serverError = Code("server-error")
        /// The server answered rows of another shape than the store's statements return.
        public static let unexpectedAnswer = Code("unexpected-answer")

        /// The code's name.
        public var description: String { name }
    }

    /// What went wrong.
    public var code: Code
    /// The server's SQLSTATE code, when the server answered.
    public var sqlState: String?
    /// What happened and what to do about it.
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - sqlState: The server's SQLSTATE code, if the server answered.
    ///   - message: What happened and what to do about it.
    public init(_ code: Code, sqlState: String? = nil, message: String) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
    }

    /// A call that missed its deadline.
    init(_ code: Code, message: String, deadline: Duration) {
        self.init(code, message: message)
        self.deadline = deadline
    }

    /// The deadline a call missed, when that is what happened.
    var deadline: Duration?

    /// True for errors that waiting will not fix: the operator must change the database or the configuration.
    public var isConfigurationError: Bool {
        [.insufficientPrivilege, .schemaMissing, .schemaTooNew].contains(code)
    }

    /// `PostgreSQL coordination store: schema-missing (42P01): …`.
    public var description: String {
        "PostgreSQL coordination store: \(code)\(sqlState.map { " (\($0))" } ?? ""): \(message)"
    }

    /// The error a store call throws for it.
    var coordinationStoreError: CoordinationStoreError {
        if let deadline { return .timedOut(deadline) }
        if isConfigurationError || code == .unexpectedAnswer { return .protocolViolation(description) }
        return .unavailable(description)
    }

    /// True for the SQLSTATE codes a retry of the same statement can cure (serialization failure, deadlock).
    static func isSerializationConflict(_ sqlState: String?) -> Bool {
        sqlState == "40001" || sqlState == "40P01"
    }

    /// True for the SQLSTATE code of a server that accepts no writes (25006).
    static func isReadOnly(_ sqlState: String?) -> Bool {
        sqlState == "25006"
    }

    /// Classifies a server error by its SQLSTATE code; `nil` when `error` is not a server error.
    static func classify(_ error: PSQLError) -> PostgresStoreError? {
        guard let sqlState = error.serverInfo?[.sqlState] else { return nil }
        let serverMessage = error.serverInfo?[.message] ?? "no message"
        switch sqlState {
        case "42501":
            return PostgresStoreError(
                .insufficientPrivilege, sqlState: sqlState,
                message: "\(serverMessage); grant the role SELECT, INSERT, UPDATE, DELETE on the store's tables and "
                    + "USAGE on its sequence (see Schema/grants.sql)")
        case "42P01", "42P02", "3F000", "42703", "42883":
            return PostgresStoreError(
                .schemaMissing, sqlState: sqlState,
                message: "\(serverMessage); run Schema/*.sql or enable DDL (Configuration.createsSchema)")
        case "RKS01":
            return PostgresStoreError(.schemaTooNew, sqlState: sqlState, message: serverMessage)
        case "25006":
            return PostgresStoreError(
                .readOnly, sqlState: sqlState,
                message: "\(serverMessage); a failover in progress, or the store is connected to a standby")
        case "40001", "40P01":
            return PostgresStoreError(
                .serializationFailure, sqlState: sqlState,
                message: "\(serverMessage); the store's statements are written for READ COMMITTED")
        default:
            // Class 08 (connection), 53 (resources), 57 (operator intervention, statement timeout), 55P03 (lock
            // not available): the server is there but cannot serve now.
            let transient = ["08", "53", "57", "58"].contains(String(sqlState.prefix(2))) || sqlState == "55P03"
            return PostgresStoreError(
                transient ? .unavailable : .serverError, sqlState: sqlState, message: serverMessage)
        }
    }
}
