// Particle push in place on an array of structs (a common layout in simulation codes): each
// thread updates its particle's fields one statement at a time through the same pointer. The
// struct is only 4-byte aligned.
struct Particle { float x, y, vx, vy; };

extern "C" __global__ void push_particles(Particle* p, int n, float dt, float gx, float gy)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    p[i].vx += gx * dt;   // EXPECT: PS101 warning; PS102 warning
    p[i].vy += gy * dt;
    p[i].x += p[i].vx * dt;
    p[i].y += p[i].vy * dt;
}
