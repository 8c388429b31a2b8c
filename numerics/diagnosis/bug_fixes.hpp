#pragma once
// The one-line repair printed under each catalogued bug that fa-check names ("fix: ..."): what the kernel
// must do at the line where the bug lives. Kept beside the diagnosis rather than in the catalogue, which
// says what each mutant breaks (the catalogue is a leaf shared with the kernels; these lines are advice).
#include <string_view>

namespace fl::numerics::diagnosis {

// The repair for a catalogue id, or "" for an id without one.
std::string_view fix_for_bug(std::string_view id);

}  // namespace fl::numerics::diagnosis
