// Nothing to wrap: qrencode.h has no macros harrec needs. SwiftPM wants a source file.
#include "CQRShims.h"
