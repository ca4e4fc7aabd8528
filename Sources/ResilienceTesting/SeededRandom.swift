/// A random number generator with a fixed seed, for reproducible jitter in tests and simulations.
///
/// The same seed always produces the same sequence on every platform.
public typealias SeededRandomNumberGenerator = PseudoRandomGenerator
