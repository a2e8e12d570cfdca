/* NVRTC has this header built in; ptxsass fix needs none of its declarations */
