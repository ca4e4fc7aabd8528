// Importing ResilienceSync gives its users the Core vocabulary its API is written in (Mutation, MutationStore…).
@_exported import ResilienceCore
