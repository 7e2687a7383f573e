"""Pure-NumPy oracle of LASVM on a budget (onlinekern.learners.lasvm), written from Bordes, Ertekin,
Weston & Bottou, JMLR 6 (2005), Algorithms 3 and 4 (PROCESS, REPROCESS, online, no finishing step)
and the budget rule of the module's docstring.  Slots follow the compiled support set (a new SV
at the end, a removed one replaced by the last), because the working pair is the first slot among
tied gradients.  Kernel rows are recomputed from the stored vectors every time (no cache).
"""
import numpy as np

TIE = 1e-12      # gradients within TIE * (1 + |g|) of the extreme count as tied (first slot wins)


class LASVMRef:
    """Budgeted LASVM, binary, Gaussian kernel; ``step(x, y)`` returns the pre-update score."""

    def __init__(self, d, gamma, C=1.0, budget=1000, tau=1e-3):
        self.gamma, self.C, self.B, self.tau = gamma, C, budget, tau
        self.X = np.zeros((0, d))
        self.a = np.zeros(0)
        self.g = np.zeros(0)
        self.y = np.zeros(0)
        self.b = 0.0

    def krow(self, x):
        """k(x_s, x) for every SV s."""
        if not len(self.a):
            return np.zeros(0)
        return np.exp(-self.gamma * ((self.X - x) ** 2).sum(1))

    def srow(self, s):
        """The kernel row of SV s, k_ss = 1."""
        r = self.krow(self.X[s])
        r[s] = 1.0
        return r

    def _lo(self):       # A_s
        return np.minimum(0.0, self.C * self.y)

    def _hi(self):       # B_s
        return np.maximum(0.0, self.C * self.y)

    def _imax(self):
        ok = self.a < self._hi()
        if not ok.any():
            return -1
        v = self.g[ok].max()
        return int(np.flatnonzero(ok & (self.g >= v - TIE * (1 + abs(v))))[0])

    def _imin(self):
        ok = self.a > self._lo()
        if not ok.any():
            return -1
        v = self.g[ok].min()
        return int(np.flatnonzero(ok & (self.g <= v + TIE * (1 + abs(v))))[0])

    def _remove(self, s):
        last = len(self.a) - 1
        for name in ("X", "a", "g", "y"):
            arr = getattr(self, name)
            arr[s] = arr[last]
            setattr(self, name, arr[:last].copy())

    def _set(self, s, a):
        """alpha_s <- a, snapped onto a bound within TIE * C."""
        for bound in (self._hi()[s], self._lo()[s]):
            if abs(a - bound) <= TIE * self.C:
                a = bound
                break
        self.a[s] = a

    def _victim(self):
        """The bound SV of largest y (g - b) when that exceeds 2, else the smallest |alpha|."""
        a = np.abs(self.a)
        viol = np.where(a == self.C, self.y * (self.g - self.b), -np.inf)
        if viol.max() > 2.0:
            w = viol.max()
            return int(np.flatnonzero(viol >= w - TIE * (1 + w))[0])
        m = a.min()
        return int(np.flatnonzero(a <= m + TIE * (1 + m))[0])

    def _step(self, i, j, Ki, Kj):
        """Direction search on pair (i, j) with their kernel rows Ki, Kj over the slots."""
        eta = 2.0 - 2.0 * Ki[j]
        if eta < 1e-12:
            eta = 1e-12
        lam = (self.g[i] - self.g[j]) / eta
        ri, rj = self._hi()[i] - self.a[i], self.a[j] - self._lo()[j]
        clip = 0
        if ri <= lam:
            lam, clip = ri, 1
        if rj <= lam:
            lam, clip = rj, 2
        self._set(i, self._hi()[i] if clip == 1 else self.a[i] + lam)
        self._set(j, self._lo()[j] if clip == 2 else self.a[j] - lam)
        self.g -= lam * (Ki - Kj)

    def _bias(self):
        i, j = self._imax(), self._imin()
        if i >= 0 and j >= 0:
            self.b = 0.5 * (self.g[i] + self.g[j])
        elif i >= 0:
            self.b = self.g[i]
        elif j >= 0:
            self.b = self.g[j]
        else:
            self.b = 0.0
        return i, j

    def step(self, x, y):
        """Predict x, then PROCESS and REPROCESS; the pre-update score."""
        kx = self.krow(x)
        f = float(kx @ self.a) + self.b if len(self.a) else self.b
        self.process(x, y, kx, f - self.b)
        self.reprocess()
        return f

    def process(self, x, y, kx, fx):
        """PROCESS (Algorithm 3) with the budget rule; kx: the kernel row of x, fx: sum alpha k."""
        gk = y - fx
        partner = self._imin() if y > 0 else self._imax()
        if partner >= 0:
            viol = (gk - self.g[partner]) if y > 0 else (self.g[partner] - gk)
            if viol <= self.tau:
                return
        if len(self.a) >= self.B:
            v = self._victim()
            if self.a[v] != 0.0:
                self.g += self.a[v] * self.srow(v)
                gk += self.a[v] * kx[v]
            kx = kx.copy()
            kx[v] = kx[-1]
            kx = kx[:-1]
            r = self.a[v]
            self._remove(v)
            while r != 0.0:                   # keep sum alpha = 0: the coefficient goes on
                u = self._imax() if r > 0 else self._imin()
                if u < 0:
                    break
                room = (self._hi() if r > 0 else self._lo())[u] - self.a[u]
                if abs(r) < abs(room):
                    d = r
                    self._set(u, self.a[u] + d)
                else:
                    d = room
                    self._set(u, (self._hi() if r > 0 else self._lo())[u])
                r -= d
                self.g -= d * self.srow(u)
                gk -= d * kx[u]
            partner = self._imin() if y > 0 else self._imax()
            if partner >= 0:
                viol = (gk - self.g[partner]) if y > 0 else (self.g[partner] - gk)
                if viol <= self.tau:
                    return
        # insert at slot n
        n = len(self.a)
        self.X = np.vstack([self.X, x])
        self.a = np.append(self.a, 0.0)
        self.g = np.append(self.g, gk)
        self.y = np.append(self.y, y)
        if partner < 0:
            return
        Kk = np.append(kx, 1.0)
        Kp = self.srow(partner)
        if y > 0:
            self._step(n, partner, Kk, Kp)
        else:
            self._step(partner, n, Kp, Kk)

    def reprocess(self):
        """REPROCESS (Algorithm 4): one direction search, the removal of blatant non-SVs, b."""
        i, j = self._imax(), self._imin()
        if i >= 0 and j >= 0 and self.g[i] - self.g[j] > self.tau:
            self._step(i, j, self.srow(i), self.srow(j))
        i, j = self._imax(), self._imin()
        if i >= 0 and j >= 0:
            gmax, gmin = self.g[i], self.g[j]
            s = len(self.a) - 1
            while s >= 0:
                if self.a[s] == 0.0 and ((self.y[s] < 0 and self.g[s] >= gmax) or (self.y[s] > 0 and self.g[s] <= gmin)):
                    self._remove(s)
                s -= 1
        self._bias()
