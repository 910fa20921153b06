//! The kernel: the thread, block, instance ids every staging loop uses.
    const int td_tid = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
    const long long td_blk = (long long)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
    const int td_t = td_tid % TD_TPI;
    const long long td_inst = td_blk * TD_IPB + td_tid / TD_TPI;
    (void)td_t;
    (void)td_inst;
