#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/xml_escape.h"

namespace dlio::report {

std::string Escape(std::string_view s) { return XmlEscape(s); }

std::string FormatNumber(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e15 || a < 1e-4)) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
  }
  // Enough decimals for `digits` significant digits, never exponent notation.
  int decimals = 0;
  if (a > 0) decimals = std::max(0, digits - 1 - static_cast<int>(std::floor(std::log10(a))));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

Unit ByteUnit(double max_bytes) {
  static const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double scale = 1;
  int i = 0;
  while (i < 4 && max_bytes >= scale * 1024) {
    scale *= 1024;
    ++i;
  }
  return {scale, kNames[i]};
}

Unit SecondUnit(double max_seconds) {
  if (max_seconds < 1e-3) return {1e-6, "µs"};
  if (max_seconds < 1) return {1e-3, "ms"};
  if (max_seconds < 180) return {1, "s"};
  if (max_seconds < 3 * 3600) return {60, "min"};
  return {3600, "h"};
}

std::string FormatBytes(double bytes) {
  const Unit u = ByteUnit(bytes);
  return FormatNumber(bytes / u.scale) + " " + u.name;
}

std::string FormatSeconds(double s) {
  const Unit u = SecondUnit(s);
  return FormatNumber(s / u.scale) + " " + u.name;
}

namespace {

double NiceStep(double span, int target) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  const double raw = span / std::max(1, target);
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * mag;
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) hi = lo + 1;
  const double step = NiceStep(hi - lo, target);
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
    if (ticks.size() > 100) break;
  }
  return ticks;
}

double NiceCeil(double hi, int target) {
  if (!(hi > 0)) return 1;
  const double step = NiceStep(hi, target);
  return std::ceil(hi / step - 1e-9) * step;
}

Plot::Plot(int width, int height, double x0, double x1, double y0, double y1)
    : width_(width),
      height_(height),
      x0_(x0),
      x1_(x1 > x0 ? x1 : x0 + 1),
      y0_(y0),
      y1_(y1 > y0 ? y1 : y0 + 1) {}

double Plot::X(double v) const { return kLeft + (v - x0_) / (x1_ - x0_) * inner_width(); }
double Plot::Y(double v) const { return kTop + (1 - (v - y0_) / (y1_ - y0_)) * inner_height(); }

namespace {

std::string Px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string TitleElement(const std::string& title) {
  return title.empty() ? "" : "<title>" + Escape(title) + "</title>";
}

}  // namespace

void Plot::Axes(const std::string& x_title, const std::string& y_title) {
  for (double t : NiceTicks(y0_, y1_)) {
    const std::string y = Px(Y(t));
    body_ += "<line class=\"grid\" x1=\"" + Px(kLeft) + "\" x2=\"" + Px(kLeft + inner_width()) +
             "\" y1=\"" + y + "\" y2=\"" + y + "\"/>";
    PixelText(kLeft - 6, Y(t) + 4, FormatNumber(t), "end");
  }
  XAxis(x_title);
  body_ += "<text class=\"ttl\" text-anchor=\"middle\" transform=\"translate(14," +
           Px(kTop + inner_height() / 2.0) + ") rotate(-90)\">" + Escape(y_title) + "</text>";
}

void Plot::XAxis(const std::string& x_title) {
  const double bottom = kTop + inner_height();
  for (double t : NiceTicks(x0_, x1_, std::max(2, inner_width() / 110))) {
    const std::string x = Px(X(t));
    body_ += "<line class=\"tick\" x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + Px(bottom) +
             "\" y2=\"" + Px(bottom + 5) + "\"/>";
    PixelText(X(t), bottom + 18, FormatNumber(t), "middle");
  }
  body_ += "<line class=\"axis\" x1=\"" + Px(kLeft) + "\" x2=\"" + Px(kLeft + inner_width()) +
           "\" y1=\"" + Px(bottom) + "\" y2=\"" + Px(bottom) + "\"/>";
  PixelText(kLeft + inner_width() / 2.0, height_ - 6, x_title, "middle", "ttl");
}

void Plot::CategoryAxes(const std::vector<std::string>& labels, const std::string& x_title,
                        const std::string& y_title) {
  const double bottom = kTop + inner_height();
  for (double t : NiceTicks(y0_, y1_)) {
    const std::string y = Px(Y(t));
    body_ += "<line class=\"grid\" x1=\"" + Px(kLeft) + "\" x2=\"" + Px(kLeft + inner_width()) +
             "\" y1=\"" + y + "\" y2=\"" + y + "\"/>";
    PixelText(kLeft - 6, Y(t) + 4, FormatNumber(t), "end");
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    PixelText(X(i + 0.5), bottom + 18, labels[i], "middle");
  }
  body_ += "<line class=\"axis\" x1=\"" + Px(kLeft) + "\" x2=\"" + Px(kLeft + inner_width()) +
           "\" y1=\"" + Px(bottom) + "\" y2=\"" + Px(bottom) + "\"/>";
  PixelText(kLeft + inner_width() / 2.0, height_ - 6, x_title, "middle", "ttl");
  body_ += "<text class=\"ttl\" text-anchor=\"middle\" transform=\"translate(14," +
           Px(kTop + inner_height() / 2.0) + ") rotate(-90)\">" + Escape(y_title) + "</text>";
}

void Plot::Line(const Points& points, const std::string& color, bool fill,
                const std::string& title) {
  if (points.empty()) return;
  std::string d;
  d.reserve(points.size() * 16);
  for (size_t i = 0; i < points.size(); ++i) {
    d += i == 0 ? 'M' : 'L';
    d += Px(X(points[i].first));
    d += ' ';
    d += Px(Y(points[i].second));
  }
  if (fill) {
    const std::string area = d + "L" + Px(X(points.back().first)) + " " + Px(Y(y0_)) + "L" +
                             Px(X(points.front().first)) + " " + Px(Y(y0_)) + "Z";
    body_ +=
        "<path d=\"" + area + "\" fill=\"" + color + "\" fill-opacity=\"0.18\" stroke=\"none\"/>";
  }
  body_ += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + color +
           "\" stroke-width=\"1.5\" stroke-linejoin=\"round\">" + TitleElement(title) + "</path>";
}

void Plot::Bar(double xa, double xb, double y, const std::string& color, const std::string& title) {
  const double top = Y(std::max(y, y0_));
  const double h = Y(y0_) - top;
  body_ += "<rect x=\"" + Px(X(xa)) + "\" y=\"" + Px(top) + "\" width=\"" +
           Px(std::max(0.5, X(xb) - X(xa))) + "\" height=\"" + Px(std::max(0.0, h)) + "\" fill=\"" +
           color + "\">" + TitleElement(title) + "</rect>";
}

void Plot::Dots(const Points& points, const std::string& color, const std::string& title) {
  if (points.empty()) return;
  std::string d;
  d.reserve(points.size() * 14);
  for (const auto& [x, y] : points) {
    d += 'M';
    d += Px(X(x));
    d += ' ';
    d += Px(Y(y));
    d += "h0";
  }
  body_ += "<path d=\"" + d + "\" stroke=\"" + color +
           "\" stroke-width=\"3.5\" stroke-linecap=\"round\" fill=\"none\">" + TitleElement(title) +
           "</path>";
}

void Plot::PixelRect(double x, double y, double w, double h, const std::string& color,
                     const std::string& title) {
  body_ += "<rect x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" width=\"" + Px(std::max(0.5, w)) +
           "\" height=\"" + Px(h) + "\" fill=\"" + color + "\">" + TitleElement(title) + "</rect>";
}

void Plot::PixelText(double x, double y, const std::string& text, const std::string& anchor,
                     const std::string& css_class) {
  body_ += "<text class=\"" + css_class + "\" x=\"" + Px(x) + "\" y=\"" + Px(y) +
           "\" text-anchor=\"" + anchor + "\">" + Escape(text) + "</text>";
}

void Plot::Legend(const std::vector<std::pair<std::string, std::string>>& color_and_label) {
  double x = width_ - kRight;
  for (auto it = color_and_label.rbegin(); it != color_and_label.rend(); ++it) {
    const double w = 7.0 * static_cast<double>(it->second.size()) + 4;
    x -= w;
    PixelText(x, 10, it->second, "start");
    x -= 14;
    PixelRect(x, 2, 10, 10, it->first);
    x -= 10;
  }
}

std::string Plot::Svg(const std::string& label) const {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " +
         std::to_string(width_) + " " + std::to_string(height_) + "\" width=\"" +
         std::to_string(width_) + "\" height=\"" + std::to_string(height_) +
         "\" role=\"img\" aria-label=\"" + Escape(label) + "\"><title>" + Escape(label) +
         "</title>" + body_ + "</svg>\n";
}

}  // namespace dlio::report
