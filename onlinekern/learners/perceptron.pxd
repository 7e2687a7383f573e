# The Perceptron's update decision, shared by the learners built on it (RBP, Forgetron).
cdef bint perceptron_update(int task, const double* f, double y, int C, double eta, double epsilon,
                            double* a) noexcept nogil
# The averaged Perceptron's score (Freund & Schapire 1999), shared with RBP.
from onlinekern._core.support cimport SupportSet
cdef void averaged_scores(SupportSet sv, long long t, int C, double* out) noexcept nogil
