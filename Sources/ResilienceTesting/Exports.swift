// The test kit is written in Core's vocabulary; importing it brings that along.
@_exported import ResilienceCore
