(;GM[Catena]FF[4]CA[UTF-8]CV[1]AP[catena_zero:0.1.0]SZ[2]RU[komi/quadratic]KM[500]
;B[B2]
;W[button])
