import ServiceLifecycle

/// The transport as a swift-service-lifecycle `Service`, so that a `ServiceGroup` shuts down the client it
/// created: ``run()`` waits for the group's graceful shutdown (or the task's cancellation) and then calls
/// ``shutdown()`` (nothing to do for a client passed in, such as `HTTPClient.shared`).
///
/// List it before the services that send through it (the HTTP server, the sync engine): a group stops its
/// services in reverse order, so they finish their last requests while the client still runs.
///
/// ```swift
/// let transport = AsyncHTTPClientTransport(configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
/// let group = ServiceGroup(services: [transport, server], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
extension AsyncHTTPClientTransport: Service {
    /// Waits for graceful shutdown (or cancellation), then shuts down the client the transport created.
    public func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }
}
