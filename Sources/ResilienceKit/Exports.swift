// ResilienceKit is the composition root: importing it gives the whole vocabulary and every policy.
@_exported import ResilienceCore
@_exported import ResiliencePolicies
