# The Perceptron's update decision, shared by the learners built on it (RBP, Forgetron).
cdef bint perceptron_update(int task, const double* f, double y, int C, double eta, double epsilon,
                            double* a) noexcept nogil
