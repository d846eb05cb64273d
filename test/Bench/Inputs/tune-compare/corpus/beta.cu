// MOVE-WHEN-TUNED
__global__ void k() {}
int main() {}
