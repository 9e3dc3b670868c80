// libqrencode's header: the device setup page's QR code.
#ifndef CQRSHIMS_H
#define CQRSHIMS_H

#include <qrencode.h>

#endif
