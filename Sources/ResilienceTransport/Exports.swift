// Importing ResilienceTransport gives its users the Core vocabulary its API is written in.
@_exported import ResilienceCore
