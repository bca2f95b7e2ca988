/// Packing weights, biases and per-channel vectors into the constant buffer (vec4s).

extension NNPlanner {
    /// Appends vec4-aligned floats; returns their vec4 offset.
    mutating func appendConstants(_ values: [Float]) -> Int {
        let offset = constantData.count / 4
        constantData += values
        while constantData.count % 4 != 0 { constantData.append(0) }
        return offset
    }

    /// A per-channel vector, zero-padded to whole vec4s.
    mutating func appendChannelVector(_ values: [Float], channels: Int) -> Int {
        appendConstants(values.count == 1 ? [Float](repeating: values[0], count: channels) : values)
    }

    /// OHWI weights -> per output group, [ky][kx][input group][input lane] vec4s of 4 output channels.
    mutating func appendConvWeights(_ w: [Float], outC: Int, kh: Int, kw: Int, inC: Int) -> Int {
        let outGroups = (outC + 3) / 4, inGroups = (inC + 3) / 4
        var packed = [Float](repeating: 0, count: outGroups * kh * kw * inGroups * 16)
        var index = 0
        for og in 0..<outGroups {
            for ky in 0..<kh {
                for kx in 0..<kw {
                    for ig in 0..<inGroups {
                        for il in 0..<4 {
                            for ol in 0..<4 {
                                let o = og * 4 + ol, i = ig * 4 + il
                                if o < outC && i < inC { packed[index] = w[((o * kh + ky) * kw + kx) * inC + i] }
                                index += 1
                            }
                        }
                    }
                }
            }
        }
        return appendConstants(packed)
    }

    mutating func appendBias(_ node: Int, slot: Int, channels: Int) throws -> Int {
        let inputs = graph.nodes[node].inputs
        guard slot < inputs.count, inputs[slot] >= 0 else {
            return appendConstants([Float](repeating: 0, count: channels))
        }
        return appendChannelVector(try floats(node, slot, count: channels, what: "bias"), channels: channels)
    }
}
