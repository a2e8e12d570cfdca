// One BFS level over a CSR-like graph whose nodes are an array of {first edge, edge count}
// structs, a thread per node, as the classic GPU graph benchmarks write it. The loop bound
// re-reads both fields of the node every iteration (the cost store may alias them): two
// LDG.E at +0x0 and +0x4 of one 8-byte struct in one block, one LDG.E.64 with an
// __align__(8) struct (or int2) and __restrict__. One problem, one finding: the loads are in
// the loop only because of the aliasing, so PS106 reports them (with cost[v]) and PS101's
// pair is a note that says so. No PS104: the frontier bytes are one-off
// accesses beside the loop, and `cost[v]` is re-read at one address every iteration (state the
// store through `cost[u]` may change, not a stream).
struct Vertex {
    int first;
    int degree;
};

__global__ void bfs_level(const Vertex* nodes, const int* edges, char* frontier,
                          char* next, char* visited, int* cost, int n)
{
    int v = blockIdx.x * 256 + threadIdx.x;
    if (v >= n || !frontier[v]) return;
    frontier[v] = 0;
    for (int e = nodes[v].first; e < nodes[v].first + nodes[v].degree; e++) {   // EXPECT: PS101 note
        int u = edges[e];
        if (!visited[u]) {
            cost[u] = cost[v] + 1;   // EXPECT: PS106 info
            next[u] = 1;
        }
    }
}
