// ResilienceKit is the composition root: importing it gives the whole vocabulary, every policy, the transport,
// the sources and aggregator, telemetry and presentation.
@_exported import ResilienceCore
@_exported import ResiliencePolicies
@_exported import ResiliencePresentation
@_exported import ResilienceSources
@_exported import ResilienceTelemetry
@_exported import ResilienceTransport
