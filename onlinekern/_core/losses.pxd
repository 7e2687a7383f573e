# Loss functions.  Sign convention (everywhere in onlinekern, scikit-learn's): dloss(p, y) is the
# derivative of the loss with respect to the *prediction* p.  Kinks take the subgradient 0 on the
# flat side (hinge: -y only if y*p < 1).

cdef class Loss:
    cdef readonly str name
    cdef readonly bint classification   # labels in {-1, +1}
    cdef double loss(self, double p, double y) noexcept nogil
    cdef double dloss(self, double p, double y) noexcept nogil

cdef class Hinge(Loss):
    pass

cdef class Logistic(Loss):
    pass

cdef class SquaredHinge(Loss):
    pass

cdef class Squared(Loss):
    pass

cdef class Absolute(Loss):
    pass

cdef class EpsilonInsensitive(Loss):
    cdef readonly double epsilon

cdef class Huber(Loss):
    cdef readonly double delta

cdef class Quantile(Loss):
    cdef readonly double tau


# Multiclass losses on a score vector f (length C) and a class index y.  grad() writes
# g = d loss / d f into g (length C) and returns the loss; `runner` receives the runner-up class
# r = argmax_{c != y} f_c (lowest index on ties) for the margin losses, -1 for softmax.
cdef class MulticlassLoss:
    cdef readonly str name
    cdef double grad(self, const double* f, int y, int C, double* g, int* runner) noexcept nogil

cdef class MulticlassHinge(MulticlassLoss):
    pass

cdef class MulticlassLogistic(MulticlassLoss):
    pass

cdef class Softmax(MulticlassLoss):
    pass

cdef int runner_up(const double* f, int y, int C) noexcept nogil

# One gradient interface for every task: g[0:C] = dloss/df at scores f, returns the loss.
cdef class TaskLoss:
    cdef readonly dict spec             # name and parameters (rebuilds the object)
    cdef readonly bint multiclass
    cdef Loss loss
    cdef MulticlassLoss mloss
    cdef double grad(self, const double* f, double y, int C, double* g) noexcept nogil
