"""torch.layout: how a tensor's elements are stored (torch.strided, torch.sparse_coo, the compressed sparse_csr,
sparse_csc, sparse_bsr, sparse_bsc)."""


class layout:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")


def _by_name(name):
    return {lo.name: lo for lo in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)}[name]
