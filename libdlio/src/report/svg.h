// SVG chart primitives for the HTML report: escaping, number formats, "nice" axis ticks, unit
// choice, and a Plot that maps data coordinates into a fixed pixel frame and collects elements.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlio::report {

// Text safe inside HTML/SVG elements and double-quoted attributes (& < > " ').
std::string Escape(std::string_view s);

// "1.5", "12", "0.003": at most `digits` significant digits, no trailing zeros.
std::string FormatNumber(double v, int digits = 3);
// "3.2 MiB", "512 B".
std::string FormatBytes(double bytes);
// "850 ms", "12.4 s", "3.1 min".
std::string FormatSeconds(double s);

// Ticks at 1, 2 or 5 x 10^k covering [lo, hi] with about `target` intervals.
std::vector<double> NiceTicks(double lo, double hi, int target = 5);
// The smallest tick >= hi (the top of an axis drawn with NiceTicks).
double NiceCeil(double hi, int target = 5);

// A unit for an axis of values up to `max`: divide by `scale` and append `name`.
struct Unit {
  double scale = 1;
  std::string name;
};
Unit ByteUnit(double max_bytes);      // B, KiB, MiB, GiB, TiB
Unit SecondUnit(double max_seconds);  // µs, ms, s, min, h

using Points = std::vector<std::pair<double, double>>;

// A chart frame: width x height pixels with margins for the axes; data coordinates
// [x0, x1] x [y0, y1] map into the inner area. Elements are appended in drawing order.
class Plot {
 public:
  static constexpr int kLeft = 72, kRight = 16, kTop = 24, kBottom = 46;

  Plot(int width, int height, double x0, double x1, double y0, double y1);

  double X(double v) const;
  double Y(double v) const;
  int inner_width() const { return width_ - kLeft - kRight; }
  int inner_height() const { return height_ - kTop - kBottom; }

  // Grid, ticks with labels and axis titles (titles carry the unit).
  void Axes(const std::string& x_title, const std::string& y_title);
  // Only the x axis (ticks, labels, title): charts whose rows are not a y scale.
  void XAxis(const std::string& x_title);
  // The same with one labelled category per unit of x (bars at [i, i+1)).
  void CategoryAxes(const std::vector<std::string>& labels, const std::string& x_title,
                    const std::string& y_title);
  // A line through the points; with `fill` also the area down to y0.
  void Line(const Points& points, const std::string& color, bool fill, const std::string& title);
  // A bar over [xa, xb] from y0 to y; hover text `title`.
  void Bar(double xa, double xb, double y, const std::string& color, const std::string& title);
  // One dot per point, as a single path (small whatever the count).
  void Dots(const Points& points, const std::string& color, const std::string& title);
  // A rectangle in pixel coordinates (lanes), optional hover text.
  void PixelRect(double x, double y, double w, double h, const std::string& color,
                 const std::string& title = "");
  // Text at pixel coordinates; `anchor` is start, middle or end.
  void PixelText(double x, double y, const std::string& text, const std::string& anchor,
                 const std::string& css_class = "lbl");
  // A legend row above the plot area, right-aligned.
  void Legend(const std::vector<std::pair<std::string, std::string>>& color_and_label);

  // The <svg> element; `label` is its accessible name and <title>.
  std::string Svg(const std::string& label) const;

 private:
  int width_, height_;
  double x0_, x1_, y0_, y1_;
  std::string body_;
};

}  // namespace dlio::report
