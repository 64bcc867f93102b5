// PETSc (and SLEPc) objects owned by a small holder, as h5::Handle owns HDF5 ids: an exception between
// create and destroy (an InputError every rank agreed on, a failed check) destroys the object on the way out
// instead of leaking it, and members are destroyed in reverse order of declaration. reset() destroys with
// the error checked; the destructor cannot report an error and ignores it (the call only frees memory).
#pragma once

#include <petscdmda.h>
#include <petscts.h>
#include <slepceps.h>

#include <utility>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

template <class T, PetscErrorCode (*Destroy)(T*)>
class PetscOwned {
 public:
  PetscOwned() = default;
  ~PetscOwned() {
    if (object_) Destroy(&object_);
  }
  PetscOwned(const PetscOwned&) = delete;
  PetscOwned& operator=(const PetscOwned&) = delete;
  PetscOwned(PetscOwned&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  PetscOwned& operator=(PetscOwned&& other) noexcept {
    std::swap(object_, other.object_);
    return *this;
  }

  // For the create call: XCreate(..., holder.out()). Destroys what was held first.
  T* out() {
    reset();
    return &object_;
  }
  void reset() {
    if (!object_) return;
    T object = std::exchange(object_, nullptr);
    TOKDYN_PETSC_CHECK(Destroy(&object));
  }
  T get() const { return object_; }
  operator T() const { return object_; }  // NOLINT: passes as the raw object to PETSc calls

 private:
  T object_ = nullptr;
};

using OwnedMat = PetscOwned<Mat, MatDestroy>;
using OwnedVec = PetscOwned<Vec, VecDestroy>;
using OwnedDM = PetscOwned<DM, DMDestroy>;
using OwnedVecScatter = PetscOwned<VecScatter, VecScatterDestroy>;
using OwnedEps = PetscOwned<EPS, EPSDestroy>;
using OwnedTS = PetscOwned<TS, TSDestroy>;

}  // namespace tokdyn
