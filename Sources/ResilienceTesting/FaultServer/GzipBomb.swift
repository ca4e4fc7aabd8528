import Foundation

/// Builds gzip members of zeros by hand (RFC 1951 fixed-Huffman blocks of length-258 back-references), so
/// a few hundred kilobytes on the wire inflate to hundreds of megabytes. No zlib needed.
enum GzipBomb {
    /// A complete gzip member that inflates to `size` zero bytes.
    static func make(decompressedSize size: Int) -> Data {
        var writer = BitWriter()
        writer.bytes = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]
        writer.write(1, bits: 1)  // BFINAL
        writer.write(1, bits: 2)  // BTYPE = 01, fixed Huffman
        writer.writeFixedLiteral(0)
        var remaining = size - 1
        // Eight 13-bit matches are exactly 13 bytes, so from the second group of eight on, every group emits
        // the same 13 bytes: write two groups bit by bit, then repeat the second group's bytes.
        var groups = remaining / (258 * 8)
        if groups >= 2 {
            for _ in 0..<8 { writer.writeMatch(length: 258) }
            let start = writer.bytes.count
            for _ in 0..<8 { writer.writeMatch(length: 258) }
            let pattern = Array(writer.bytes[start...])
            groups -= 2
            writer.bytes.reserveCapacity(writer.bytes.count + groups * pattern.count + 64)
            for _ in 0..<groups { writer.bytes.append(contentsOf: pattern) }
            remaining -= (groups + 2) * 258 * 8
        }
        while remaining >= 3 {
            let length = min(258, remaining)
            writer.writeMatch(length: length)
            remaining -= length
        }
        while remaining > 0 {
            writer.writeFixedLiteral(0)
            remaining -= 1
        }
        writer.writeFixedLiteral(256)  // end of block
        writer.flush()
        var data = Data(writer.bytes)
        appendLittleEndian(crc32OfZeros(count: size), to: &data)
        appendLittleEndian(UInt32(truncatingIfNeeded: size), to: &data)
        return data
    }

    private static func appendLittleEndian(_ value: UInt32, to data: inout Data) {
        for shift in stride(from: 0, to: 32, by: 8) { data.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// CRC-32 of `count` zero bytes in O(log count): the register is multiplied by x^(8·count) mod P.
    static func crc32OfZeros(count: Int) -> UInt32 {
        var power: UInt32 = 1 << 31  // x^0
        var square: UInt32 = 1 << 23  // x^8 (one byte)
        var remaining = UInt64(count)
        while remaining > 0 {
            if remaining & 1 == 1 { power = multiply(power, square) }
            square = multiply(square, square)
            remaining >>= 1
        }
        return multiply(power, 0xFFFF_FFFF) ^ 0xFFFF_FFFF
    }

    /// CRC-32 computed byte by byte (reference for tests).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// Multiplies two polynomials modulo the CRC-32 polynomial (reflected representation, as zlib does).
    private static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var mask: UInt32 = 1 << 31
        var product: UInt32 = 0
        var b = b
        while mask != 0 {
            if a & mask != 0 { product ^= b }
            mask >>= 1
            b = b & 1 == 1 ? (b >> 1) ^ 0xEDB8_8320 : b >> 1
        }
        return product
    }

    private struct BitWriter {
        var bytes: [UInt8] = []
        var accumulator: UInt32 = 0
        var count: UInt32 = 0

        /// Writes `value`'s low `bits` bits, least significant first (deflate's order for non-Huffman fields).
        mutating func write(_ value: UInt32, bits: UInt32) {
            accumulator |= value << count
            count += bits
            while count >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator >>= 8
                count -= 8
            }
        }

        /// Writes a Huffman code, most significant bit first.
        mutating func writeCode(_ code: UInt32, bits: UInt32) {
            var reversed: UInt32 = 0
            for index in 0..<bits where code & (1 << index) != 0 { reversed |= 1 << (bits - 1 - index) }
            write(reversed, bits: bits)
        }

        /// Writes a literal/length symbol with the fixed Huffman table (RFC 1951 §3.2.6).
        mutating func writeFixedLiteral(_ symbol: UInt32) {
            switch symbol {
            case 0...143: writeCode(0x30 + symbol, bits: 8)
            case 144...255: writeCode(0x190 + symbol - 144, bits: 9)
            case 256...279: writeCode(symbol - 256, bits: 7)
            default: writeCode(0xC0 + symbol - 280, bits: 8)
            }
        }

        /// Writes a back-reference of `length` (3...258) at distance 1.
        mutating func writeMatch(length: Int) {
            let (symbol, extraBits, base) = Self.lengthSymbol(length)
            writeFixedLiteral(symbol)
            if extraBits > 0 { write(UInt32(length - base), bits: extraBits) }
            writeCode(0, bits: 5)  // distance code 0 = distance 1, no extra bits
        }

        static func lengthSymbol(_ length: Int) -> (UInt32, UInt32, Int) {
            if length == 258 { return (285, 0, 258) }
            let bases = [
                3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
                131, 163, 195, 227,
            ]
            let extras: [UInt32] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5]
            var index = bases.count - 1
            while bases[index] > length { index -= 1 }
            return (UInt32(257 + index), extras[index], bases[index])
        }

        mutating func flush() {
            if count > 0 { bytes.append(UInt8(truncatingIfNeeded: accumulator)) }
            accumulator = 0
            count = 0
        }
    }
}
