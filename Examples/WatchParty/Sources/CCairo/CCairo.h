// Cairo's image (PNG) and SVG surfaces, for the watch-party example's plot.
#include <cairo.h>
#include <cairo-svg.h>
